// What every bai command shares: the global flags (where the emulator is, -o, --query,
// --subscription), the user's defaults, the ARM client (made on first use, so offline commands
// never need a running emulator) and the way results and progress are printed.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tools/bai/arm_client.h"
#include "tools/bai/az_output.h"
#include "tools/bai/endpoint_resolution.h"
#include "tools/bai/user_defaults.h"

namespace bai::cli {

inline constexpr const char* kApi = "2018-05-01";
inline constexpr const char* kPreviewApi = "2017-09-01-preview";
inline constexpr const char* kStorageApi = "2018-02-01";

struct GlobalOptions {
    TargetFlags target;
    std::string output;  // empty: json
    std::string query;
    std::string subscription;
};

class CommandContext {
public:
    explicit CommandContext(GlobalOptions& options) : options_(options) {}

    ArmClient& arm();
    const UserDefaults& defaults();

    // A flag's value, else the user's default `key`, else a usage error naming the flag.
    std::string require(const std::string& value, const std::string& key, const std::string& flag);
    std::optional<std::string> optional(const std::string& value, const std::string& key);
    // -l, else the default location, else the resource group's location.
    std::string location(const std::string& value, const std::string& group);

    void print(const nlohmann::json& result, const std::vector<Column>& table = {});
    // Whether -o was given (commands whose default output is for people, not json).
    bool output_given() const { return !options_.output.empty(); }
    // A progress line on stderr, rewritten in place on a terminal.
    void progress(const std::string& line);
    void end_progress();

private:
    GlobalOptions& options_;
    std::optional<UserDefaults> defaults_;
    std::unique_ptr<ArmClient> arm_;
    bool progress_open_ = false;
    std::string last_progress_;
};

// az's confirmation ("Are you sure you want to perform this operation?"): asks on a terminal;
// without one, refuses unless --yes.
void confirm_or_throw(bool yes);

// The name after the last '/' of a resource id.
std::string last_segment(const std::string& id);

}  // namespace bai::cli
