// bai configure --defaults key=value ... / --list-defaults, as `az configure` did.
#include <cstdio>

#include "tools/bai/cli_error.h"
#include "tools/bai/command_flags.h"
#include "tools/bai/commands.h"

namespace bai::cli {

void add_configure_command(CLI::App& app, CommandContext& ctx) {
    auto settings = std::make_shared<std::vector<std::string>>();
    auto list = std::make_shared<bool>(false);
    CLI::App* c = app.add_subcommand("configure", "Set or show the defaults of -g, -w, -e, -l and --subscription.");
    c->add_option("-d,--defaults", *settings,
                  "key=value pairs (group, workspace, experiment, location, subscription); an empty value unsets");
    c->add_flag("-l,--list-defaults", *list, "Print the defaults");
    c->callback([&ctx, settings, list] {
        auto file = UserDefaults::default_file();
        UserDefaults defaults = UserDefaults::load(file);
        for (const std::string& s : *settings) {
            size_t eq = s.find('=');
            std::string key = s.substr(0, eq);
            if (eq == std::string::npos || !UserDefaults::known_key(key)) {
                throw CliError("--defaults: '" + s + "' is not key=value with key one of group, workspace, experiment, "
                               "location, subscription",
                               kExitUsage);
            }
            defaults.set(key, s.substr(eq + 1));
        }
        if (!settings->empty()) defaults.save(file);
        if (*list || settings->empty()) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& [key, value] : defaults.values()) {
                out.push_back({{"name", key}, {"value", value}, {"source", file.string()}});
            }
            ctx.print(out, {{"Name", "name"}, {"Value", "value"}, {"Source", "source"}});
        }
    });
}

}  // namespace bai::cli
