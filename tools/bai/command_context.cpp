#include "tools/bai/command_context.h"

#include "emulator/identity/service_principals.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "tools/bai/cli_error.h"

namespace bai::cli {

ArmClient& CommandContext::arm() {
    if (arm_) return *arm_;
    std::string reason;
    std::optional<Target> target = resolve_target(options_.target, reason);
    if (!target) throw CliError(reason);
    std::string subscription = options_.subscription;
    if (subscription.empty()) {
        const char* env = std::getenv("AZURE_SUBSCRIPTION_ID");
        subscription = env != nullptr && *env != '\0' ? env : defaults().get("subscription").value_or(identity::kDefaultSubscriptionId);
    }
    arm_ = std::make_unique<ArmClient>(target->endpoints, subscription);
    return *arm_;
}

const UserDefaults& CommandContext::defaults() {
    if (!defaults_) {
        defaults_ = UserDefaults::load(UserDefaults::default_file());
        // `az configure --defaults group=... location=...` (the tutorials' step) counts where
        // bai's own file names nothing; an az file bai cannot read is left to az.
        try {
            const UserDefaults az = UserDefaults::load(UserDefaults::az_file());
            for (const char* key : {"group", "location", "workspace", "experiment"}) {
                if (!defaults_->get(key) && az.get(key)) defaults_->set(key, *az.get(key));
            }
        } catch (const CliError&) {
        }
    }
    return *defaults_;
}

std::string CommandContext::require(const std::string& value, const std::string& key, const std::string& flag) {
    if (auto found = optional(value, key)) return *found;
    throw CliError("the following argument is required: " + flag + " (or set a default: bai configure --defaults " +
                       key + "=NAME)",
                   kExitUsage);
}

std::optional<std::string> CommandContext::optional(const std::string& value, const std::string& key) {
    if (!value.empty()) return value;
    return defaults().get(key);
}

std::string CommandContext::location(const std::string& value, const std::string& group) {
    if (auto found = optional(value, "location")) return *found;
    nlohmann::json g = arm().get(group_path(arm(), group), "2018-05-01");
    if (g.is_object() && g.contains("location") && g["location"].is_string()) return g["location"].get<std::string>();
    throw CliError("no location: pass -l/--location", kExitUsage);
}

void CommandContext::print(const nlohmann::json& result, const std::vector<Column>& table) {
    end_progress();
    print_result(result, parse_output_format(options_.output.empty() ? "json" : options_.output), options_.query, table);
}

void CommandContext::progress(const std::string& line) {
    if (line == last_progress_) return;
    last_progress_ = line;
    if (isatty(STDERR_FILENO)) {
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        progress_open_ = true;
    } else {
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
}

void CommandContext::end_progress() {
    if (progress_open_) std::fputc('\n', stderr);
    progress_open_ = false;
}

void confirm_or_throw(bool yes) {
    if (yes) return;
    if (!isatty(STDIN_FILENO)) {  // az: a warning, then "Operation cancelled." and exit 1
        std::fprintf(stderr, "WARNING: Unable to prompt for confirmation as no tty available. Use --yes.\n");
        throw CliError("Operation cancelled.");
    }
    std::fprintf(stderr, "Are you sure you want to perform this operation? (y/n): ");
    std::fflush(stderr);
    char answer[16] = {0};
    if (std::fgets(answer, sizeof answer, stdin) == nullptr || (answer[0] != 'y' && answer[0] != 'Y')) {
        throw CliError("Operation cancelled.");
    }
}

std::string last_segment(const std::string& id) {
    size_t slash = id.find_last_of('/');
    return slash == std::string::npos ? id : id.substr(slash + 1);
}

}  // namespace bai::cli
