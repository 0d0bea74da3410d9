#include "emulator/portal/portal_guard.h"

#include "emulator/portal/portal_json.h"

namespace bai::portal {

bool change_allowed(const httplib::Request& req, httplib::Response& res, const std::string& token) {
    if (token.empty() || req.get_header_value("X-Portal-Token") != token) {
        send_portal_error(res, 403, "PortalTokenMissing", "Changes need the X-Portal-Token of the page (/portal/api/session).");
        return false;
    }
    // A browser names the page's origin on a POST; it must be this endpoint's own.
    if (req.has_header("Origin")) {
        const std::string origin = req.get_header_value("Origin");
        if (origin != "https://" + req.get_header_value("Host")) {
            send_portal_error(res, 403, "CrossOriginAction", "Changes come from the portal's own page, not from " + origin + ".");
            return false;
        }
    }
    return true;
}

}  // namespace bai::portal
