// The portal's JSON answers: never cached, never sniffed; errors as the APIs write them
// ({"error": {"code", "message"}}). Text that is not UTF-8 is sent as U+FFFD.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace bai::portal {

void set_portal_headers(httplib::Response& res);
void send_json(httplib::Response& res, int status, const nlohmann::json& body);
void send_portal_error(httplib::Response& res, int status, const std::string& code, const std::string& message);

}  // namespace bai::portal
