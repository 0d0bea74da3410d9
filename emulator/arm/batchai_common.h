// Steps that the Microsoft.BatchAI handlers of both API versions share: starting a
// long-running operation, marking a resource deleting, answering a list page.
#pragma once

#include <functional>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <string>

#include "emulator/arm/arm_context.h"
#include "emulator/arm/arm_request.h"

namespace bai::arm {

struct OperationTarget {
    std::string kind;  // "create", "delete", "terminate"
    std::string resource_id;
    std::string resource_ref;
    std::string subscription;
    std::string location;
};

// Records the operation and answers 202 with its polling headers.
void start_operation(ArmContext& ctx, const ArmRequest& req, httplib::Response& res, const OperationTarget& target);
// Terminate: of a job that has already ended, the service did nothing and answered 200 with no
// body and no operation (as recorded in every API version); otherwise the terminate operation.
void start_terminate(ArmContext& ctx, const ArmRequest& req, httplib::Response& res, const StoredResource& job,
                     const OperationTarget& target);
// provisioningState "deleting" and the delete operation, in one transaction.
void start_delete(ArmContext& ctx, const ArmRequest& req, httplib::Response& res, const OperationTarget& target);

using View = std::function<nlohmann::json(const StoredResource&)>;
void send_list(const ArmRequest& req, httplib::Response& res, const Page& page, const View& view);

// What a completed operation does (the tracker's completer).
void complete_operation(ArmContext& ctx, const Operation& op);

}  // namespace bai::arm
