// What every request of the portal that changes something must carry: the X-Portal-Token the page
// got from /portal/api/session (random per run: a page of another site can neither read it nor
// send the header without a CORS preflight, which the emulator never allows), and no Origin
// header naming another site.
#pragma once

#include <httplib.h>

#include <string>

namespace bai::portal {

// True when the request may change something; otherwise answers 403 (PortalTokenMissing,
// CrossOriginAction) and returns false.
bool change_allowed(const httplib::Request& req, httplib::Response& res, const std::string& token);

}  // namespace bai::portal
