// Cross-origin resource sharing as the storage services apply their CORS rules: preflight
// OPTIONS requests are answered from the rules alone (no authentication), and the answer to a
// request that names an Origin carries the Access-Control headers of the first rule that allows
// it, errors included.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

#include "fake_storage/engine/service_settings.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// Answers an OPTIONS request: 200 with the Access-Control-Allow headers of the first rule that
// allows its Origin, Access-Control-Request-Method and every Access-Control-Request-Headers
// name; else 403 CorsPreflightFailure. 400 InvalidHeaderValue when either required header is
// missing. Throws StorageError for the refusals.
void answer_preflight(const StorageRequest& request, httplib::Response& response, const std::vector<CorsRule>& rules);

// Adds the CORS headers to the answer of a request with an Origin header: from the first rule
// that allows its origin and method, Access-Control-Allow-Origin, Access-Control-Expose-Headers
// (the answer's headers that the rule exposes) and, for a rule that names its origins, Vary:
// Origin and Access-Control-Allow-Credentials; where rules exist and none allows it, Vary: Origin.
void add_cors_headers(const StorageRequest& request, httplib::Response& response, const std::vector<CorsRule>& rules);

// Whether `origin` is one of a rule's allowed origins ("*", a name, or a name with "*" wildcards),
// without regard to case.
bool cors_origin_allowed(const std::string& origin, const std::vector<std::string>& allowed);

}  // namespace bai::storage
