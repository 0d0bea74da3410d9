#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "tools/bai/endpoint_resolution.h"
#include "tools/bai/status_command.h"

namespace {

const char* kUsage =
    "usage: bai [--endpoint URL | --location DIR] [--ca-cert PEM] COMMAND\n"
    "\n"
    "commands:\n"
    "  status     whether each endpoint of the emulator answers\n"
    "\n"
    "  --endpoint URL   the emulator's ARM endpoint (or $BATCHAI_EMULATOR_ENDPOINT)\n"
    "  --location DIR   the emulator's data directory; its endpoints.json (default ./batchai-data)\n"
    "  --ca-cert PEM    certificate to trust for ARM (or $BATCHAI_EMULATOR_CA_CERT;\n"
    "                   default: the ca_cert of endpoints.json)\n"
    "  --version        print the version\n";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "bai: %s\n%s", message.c_str(), kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    bai::cli::TargetFlags flags;
    std::vector<std::string> rest;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        if (a == "--version") {
            std::printf("bai %s\n", bai::kVersion);
            return 0;
        } else if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--endpoint" || a == "--location" || a == "--ca-cert") {
            auto v = value();
            if (!v) return usage_error(a + " needs a value");
            if (a == "--endpoint") flags.endpoint = *v;
            if (a == "--location") flags.location = *v;
            if (a == "--ca-cert") flags.ca_cert = *v;
        } else {
            rest.push_back(a);
        }
    }
    if (rest.empty()) return usage_error("no command given");
    if (rest[0] == "status" && rest.size() == 1) return bai::cli::run_status(flags);
    return usage_error("unknown command '" + rest[0] + "'");
}
