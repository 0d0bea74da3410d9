#include "emulator/validation/validator.h"

#include "emulator/validation/batchai_rules.h"
#include "emulator/validation/schema_walker.h"

namespace bai::validation {
namespace {

const char* root_definition(ResourceKind kind) {
    switch (kind) {
        case ResourceKind::job: return "JobCreateParameters";
        case ResourceKind::cluster: return "ClusterCreateParameters";
        case ResourceKind::file_server: return "FileServerCreateParameters";
        case ResourceKind::workspace: return "WorkspaceCreateParameters";
        case ResourceKind::cluster_update: return "ClusterUpdateParameters";
        case ResourceKind::workspace_update: return "WorkspaceUpdateParameters";
    }
    return "";
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Required properties that the az CLI fills from its command line or the environment.
bool cli_fills(const std::string& generic_path) {
    static const char* const kExact[] = {"location",
                                         "properties.cluster",
                                         "properties.vmSize",
                                         "properties.userAccountSettings",
                                         "properties.sshConfiguration.userAccountSettings"};
    for (const char* p : kExact) {
        if (generic_path == p) return true;
    }
    for (const char* suffix : {"azureFileShares[].accountName", "azureFileShares[].credentials",
                               "azureBlobFileSystems[].accountName", "azureBlobFileSystems[].credentials"}) {
        if (ends_with(generic_path, suffix)) return true;
    }
    return false;
}

}  // namespace

Report validate(const nlohmann::json& body, ResourceKind kind, ApiVersion version, Mode mode) {
    Report report;
    if (!body.is_object()) {
        report.errors.push_back({"$", "the body must be a JSON object"});
        return report;
    }
    if (!definitions(version).contains(root_definition(kind))) {
        report.errors.push_back({"$", std::string("this API version has no ") + root_definition(kind)});
        return report;
    }
    SchemaWalker walker(definitions(version), report,
                        mode == Mode::cli ? std::function<bool(const std::string&)>(cli_fills) : nullptr);
    walker.walk_definition(body, root_definition(kind), "");
    const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json& properties = body.contains("properties") ? body["properties"] : empty;
    if (kind == ResourceKind::job) check_job_rules(properties, version, mode, report);
    if (kind == ResourceKind::cluster || kind == ResourceKind::cluster_update) check_cluster_rules(properties, mode, report);
    if (kind == ResourceKind::file_server) check_vm_size(properties, report);
    return report;
}

Report validate_text(std::string_view text, ResourceKind kind, ApiVersion version, Mode mode) {
    nlohmann::json body;
    try {
        body = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        Report report;
        report.errors.push_back({"$", std::string("is not valid JSON: ") + e.what()});
        return report;
    }
    return validate(body, kind, version, mode);
}

}  // namespace bai::validation
