// ARM ids of the resources, built from the captured path parameters, and the lookups that fail
// with the service's not-found errors.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/router.h"
#include "emulator/validation/validator.h"

namespace bai::arm {

// Resource kinds as stored (StoredResource::type).
namespace kind {
inline constexpr const char* kSubscription = "subscription";  // known once a group was made in it
inline constexpr const char* kResourceGroup = "resourceGroup";
inline constexpr const char* kStorageAccount = "storageAccount";
inline constexpr const char* kBatchAccount = "batchAccount";
inline constexpr const char* kVirtualNetwork = "virtualNetwork";
inline constexpr const char* kWorkspace = "workspace";
inline constexpr const char* kExperiment = "experiment";
inline constexpr const char* kJob = "job";
inline constexpr const char* kCluster = "cluster";
inline constexpr const char* kFileServer = "fileServer";
}  // namespace kind

std::string subscription_id(const Params& p);
std::string group_id(const Params& p);
std::string batchai_id(const Params& p);  // group_id + "/providers/Microsoft.BatchAI"
std::string workspace_id(const Params& p);
std::string workspace_id(const Params& p, const std::string& workspace);
std::string experiment_id(const Params& p);
std::string experiment_id(const std::string& workspace_id, const std::string& experiment);

// 404 ResourceGroupNotFound when the group does not exist. check_* only look for the resource;
// require_* also read its document.
void check_group(const ArmContext& ctx, const Params& p);
StoredResource require_group(const ArmContext& ctx, const Params& p);
// 404 with `code` and "The specified {noun} {name} is not found" when `id` does not exist.
void check_exists(const ArmContext& ctx, const std::string& id, const std::string& code, const std::string& noun,
                  const std::string& name);
StoredResource require(const ArmContext& ctx, const std::string& id, const std::string& code,
                       const std::string& noun, const std::string& name);

// 400 naming the JSON path of the first fault (every fault in details): MissingRequiredProperty
// for a missing field, InvalidRequestContent for anything else.
void check_body(const nlohmann::json& body, validation::ResourceKind kind, validation::ApiVersion version);

// "sub$rg$ws$exp$job": how the service wrote an operation's resourceId.
std::string resource_ref(const Params& p, std::initializer_list<const char*> names);

}  // namespace bai::arm
