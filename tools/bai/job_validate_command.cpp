// bai job validate -f job.json: the validator of the ARM API, offline, in CLI mode (what the az
// CLI filled is allowed to be missing) or REST mode, with a hint per error and the lint warnings.
#include <cstdio>

#include "tools/bai/command_flags.h"
#include "tools/bai/job_commands.h"
#include "tools/bai/job_lint.h"
#include "tools/bai/json_file.h"

namespace bai::cli {
namespace {

using nlohmann::json;

struct ValidateFlags {
    std::string file, mode = "cli", api, vm_size;
};

constexpr const char* kMarchApi = "2018-03-01";

// --api-version, else the era its "$schema" names (the recipes carry one), else 2018-05-01.
std::string api_of(const ValidateFlags& f, const json& body) {
    if (!f.api.empty()) return f.api;
    if (body.is_object() && body.contains("$schema") && body["$schema"].is_string()) {
        const std::string schema = body["$schema"];
        if (schema.find(kPreviewApi) != std::string::npos) return kPreviewApi;
        if (schema.find(kMarchApi) != std::string::npos) return kMarchApi;
    }
    return kApi;
}

validation::ApiVersion validation_version(const std::string& api) {
    if (api == kPreviewApi) return validation::ApiVersion::v2017_09_01_preview;
    if (api == kMarchApi) return validation::ApiVersion::v2018_03_01;
    return validation::ApiVersion::v2018_05_01;
}

void print_findings(const std::string& file, const char* kind, const std::vector<validation::Finding>& findings,
                    bool hints) {
    for (const validation::Finding& f : findings) {
        std::printf("%s: %s: %s: %s\n", file.c_str(), kind, f.path.c_str(), f.message.c_str());
        if (hints) std::printf("  hint: %s\n", hint_for(f).c_str());
    }
}

}  // namespace

void add_job_validate_command(CLI::App* job, CommandContext& ctx) {
    auto f = std::make_shared<ValidateFlags>();
    CLI::App* c = job->add_subcommand("validate", "Check a job.json offline; exit 1 when it has errors.");
    c->add_option("-f,--config-file,--config", f->file, "The job.json")->required();
    c->add_option("--mode", f->mode, "cli: a job.json for `job create` (default); rest: a PUT body")
        ->check(CLI::IsMember({"cli", "rest"}));
    c->add_option("--api-version", f->api,
                  "2018-05-01, 2018-03-01 or 2017-09-01-preview (default: what $schema names, else 2018-05-01)")
        ->check(CLI::IsMember({kApi, kMarchApi, kPreviewApi}));
    c->add_option("-s,--vm-size", f->vm_size, "The cluster's VM size, to check GPU workers against it");
    c->callback([&ctx, f] {
        std::string text = read_text_file(f->file, "--config-file");
        json body = json::parse(text, nullptr, false);
        std::string api = api_of(*f, body);
        auto version = validation_version(api);
        auto mode = f->mode == "rest" ? validation::Mode::rest : validation::Mode::cli;
        validation::Report report = validation::validate_text(text, validation::ResourceKind::job, version, mode);
        for (validation::Finding& w : lint_job(body, {f->vm_size})) report.warnings.push_back(std::move(w));

        if (ctx.output_given()) {
            json out = {{"file", f->file}, {"apiVersion", api}, {"errors", json::array()}, {"warnings", json::array()}};
            for (const auto& e : report.errors) out["errors"].push_back({{"path", e.path}, {"message", e.message}, {"hint", hint_for(e)}});
            for (const auto& w : report.warnings) out["warnings"].push_back({{"path", w.path}, {"message", w.message}});
            ctx.print(out);
        } else {
            print_findings(f->file, "error", report.errors, true);
            print_findings(f->file, "warning", report.warnings, false);
            std::printf("%s: %zu error(s), %zu warning(s) (api-version %s, %s mode)\n", f->file.c_str(),
                        report.errors.size(), report.warnings.size(), api.c_str(), f->mode.c_str());
        }
        if (!report.ok()) throw CliError("", 1);
    });
}

}  // namespace bai::cli
