// The application packages the Batch accounts know (--batch-application [ACCOUNT/]APP:VERSION=DIR;
// without ACCOUNT, every account's), as the applications API lists them and as nodes get them:
// a package referenced by a pool (installed when a node joins, before its start task) or by a
// task (installed when it runs) is copied into the node's applications/APP_VERSION directory and
// named by AZ_BATCH_APP_PACKAGE_APP_VERSION (as on the service's Linux nodes: '.', '-' and '#'
// become '_', the case is kept); a reference without a version gets the application's default
// (its first version given) and AZ_BATCH_APP_PACKAGE_APP as well.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/engine/shell_words.h"

namespace bai::batch {

struct AppPackage {
    std::string account;  // "" for every account
    std::string application;
    std::string version;
    std::filesystem::path dir;
};

// [ACCOUNT/]APP:VERSION=DIR; throws std::invalid_argument naming what is wrong (DIR must be a
// directory).
AppPackage parse_app_package_flag(std::string_view flag);

class AppPackages {
public:
    AppPackages() = default;
    explicit AppPackages(std::vector<AppPackage> packages) : packages_(std::move(packages)) {}

    // The account's applications as the service summarizes them ({"id", "versions"}), by id.
    nlohmann::json summaries(const std::string& account) const;
    std::optional<nlohmann::json> summary(const std::string& account, const std::string& application) const;
    // The package a reference ({"applicationId", "version"?}) names, or nullopt.
    std::optional<AppPackage> find(const std::string& account, const nlohmann::json& reference) const;
    // BatchError 400 InvalidApplicationPackageReferences (a choice of status) naming the first
    // reference of `references` (at `property`) that names no package of the account.
    void check_references(const std::string& account, const nlohmann::json& references, const std::string& property) const;
    // Installs the packages `references` name under `node_root`/applications (what is there
    // already stays) and sets their variables in `env`; `view` maps a host path to the path the
    // node's processes see.
    void install(const std::string& account, const nlohmann::json& references, const std::filesystem::path& node_root,
                 engine::Environment& env, const std::function<std::string(const std::filesystem::path&)>& view) const;

private:
    std::vector<AppPackage> packages_;
};

}  // namespace bai::batch
