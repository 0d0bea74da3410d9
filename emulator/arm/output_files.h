// Jobs_ListOutputFiles: the files and directories of a job's output directory (or of its
// stdouterr directory) read straight from the storage the directory is mounted from.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/arm_request.h"
#include "emulator/arm/mount_volumes.h"

namespace bai::arm {

void list_output_files(ArmContext& ctx, const ArmRequest& req, const StoredResource& job, httplib::Response& res);

// Where a job's output directory lives in storage: a share or a container and a path inside it
// (no leading or trailing '/').
struct OutputLocation {
    Volume volume;
    std::string path;
};

// The location of `directory` (relative, '/' or '\' separated, "." for the top) inside the job's
// output directory `directory_id` ("stdouterr", or the id of one of its outputDirectories); nullopt
// when that directory is not in a share or a container the job mounts. Throws CloudError 400
// (as listOutputFiles answers) for an unknown id or a directory that leaves it.
std::optional<OutputLocation> locate_output(const ResourceStore& store, const StoredResource& job,
                                            const std::string& directory_id, std::string directory);

}  // namespace bai::arm
