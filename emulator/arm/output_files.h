// Jobs_ListOutputFiles: the files and directories of a job's output directory (or of its
// stdouterr directory) read straight from the storage the directory is mounted from.
#pragma once

#include <httplib.h>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/arm_request.h"

namespace bai::arm {

void list_output_files(ArmContext& ctx, const ArmRequest& req, const StoredResource& job, httplib::Response& res);

}  // namespace bai::arm
