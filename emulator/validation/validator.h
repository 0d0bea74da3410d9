// Offline validation of Batch AI request bodies (job, cluster, file server, workspace) against
// the official swagger of either API version, plus the cross-field rules the service applied.
// Used by the ARM API (REST mode) and by `bai job validate` (CLI mode).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/validation/swagger_definitions.h"

namespace bai::validation {

// rest: the body of a PUT as the service receives it. cli: a job.json/cluster.json given to the
// az CLI, which fills what the command line provides (cluster, vmSize, admin user, storage
// account names and keys, location) and substitutes <AZURE_BATCHAI_STORAGE_*> placeholders.
enum class Mode { rest, cli };
// The create bodies, and the two PATCH bodies (cluster scale settings, workspace tags).
enum class ResourceKind { job, cluster, file_server, workspace, cluster_update, workspace_update };

struct Finding {
    std::string path;  // JSON path of the fault: "properties.inputDirectories[1].id"
    std::string message;
};

struct Report {
    std::vector<Finding> errors;    // the service would refuse the body
    std::vector<Finding> warnings;  // accepted, but probably not what was meant
    bool ok() const { return errors.empty(); }
};

Report validate(const nlohmann::json& body, ResourceKind kind, ApiVersion version, Mode mode);
// Parses first; malformed JSON is one error at "$" naming the byte offset.
Report validate_text(std::string_view text, ResourceKind kind, ApiVersion version, Mode mode);

}  // namespace bai::validation
