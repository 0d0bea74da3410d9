// Writing ARM responses: JSON with the cloud's headers, resources without their secrets, list
// pages with nextLink.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/time/timestamps.h"
#include "emulator/arm/arm_request.h"
#include "emulator/arm/resource_store.h"

namespace bai::arm {

void send_json(httplib::Response& res, int status, const nlohmann::json& body);
// 200 (or `status`) with the view of a stored resource, its ETag and Last-Modified.
void send_resource(httplib::Response& res, const StoredResource& stored, const nlohmann::json& view,
                   int status = 200);
// {"value": [...], "nextLink": URL} where the URL repeats the request with $skiptoken.
void send_page(httplib::Response& res, const ArmRequest& request, const nlohmann::json& items,
               const std::optional<std::int64_t>& next_after);
// The position a list continues after: the request's $skiptoken, 0 when absent.
std::int64_t skip_token(const ArmRequest& request);

// A copy without what the service never returned: storage keys, passwords, secret values,
// instrumentation keys, and the emulator's own fields (top-level names starting with '_').
nlohmann::json redacted(const nlohmann::json& body);
// The stored resource's body, redacted: what a GET or a list shows.
nlohmann::json redacted_view(const StoredResource& stored);

// "2018-06-06T20:01:04.014Z", as the service wrote its times.
std::string arm_time(time::TimePoint t);

}  // namespace bai::arm
