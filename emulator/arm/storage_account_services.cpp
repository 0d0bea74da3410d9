#include "emulator/arm/storage_account_services.h"

#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_ids.h"

namespace bai::arm {

std::string storage_account_id(const Params& p) {
    return group_id(p) + "/providers/Microsoft.Storage/storageAccounts/" + p["accountName"];
}

std::optional<StoredResource> require_service_account(const ArmContext& ctx, const Params& p) {
    check_group(ctx, p);
    std::optional<StoredResource> found = ctx.store.get(storage_account_id(p));
    if (found || ctx.accounts.find(p["accountName"])) return found;
    CloudError e(404, "ResourceNotFound",
                 "The Resource 'Microsoft.Storage/storageAccounts/" + p["accountName"] + "' under resource group '" +
                     p["resourceGroupName"] + "' was not found.");
    e.headers.emplace_back("x-ms-failure-cause", "gateway");
    throw e;
}

}  // namespace bai::arm
