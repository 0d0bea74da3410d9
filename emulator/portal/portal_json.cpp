#include "emulator/portal/portal_json.h"

namespace bai::portal {

void set_portal_headers(httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
}

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
    set_portal_headers(res);
    res.status = status;
    res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json; charset=utf-8");
}

void send_portal_error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    send_json(res, status, nlohmann::json{{"error", {{"code", code}, {"message", message}}}});
}

}  // namespace bai::portal
