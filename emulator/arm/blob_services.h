// Microsoft.Storage storageAccounts/blobServices/default: the account's Blob service settings as
// ARM holds them (what `az storage account blob-service-properties show/update` reads and writes):
// versioning, blob and container soft delete, CORS and the default service version. They are
// the same settings the Blob endpoint's Get/Set Blob Service Properties keep, so a CORS rule or a
// delete retention policy set either way is seen both ways.
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_blob_service_routes(Router& router, ArmContext& ctx);

}  // namespace bai::arm
