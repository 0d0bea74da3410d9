// Microsoft.Storage storageAccounts/fileServices/default: the account's File service settings as
// ARM holds them (what `az storage account file-service-properties show/update` reads and writes):
// share soft delete (shareDeleteRetentionPolicy) and the SMB protocol settings, the same settings
// the File endpoint's Get/Set File Service Properties keep; and a soft-deleted share's restore
// (fileServices/default/shares/SHARE/restore, what `az storage share-rm restore` sends).
#pragma once

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"

namespace bai::arm {

void add_file_service_routes(Router& router, ArmContext& ctx);

}  // namespace bai::arm
