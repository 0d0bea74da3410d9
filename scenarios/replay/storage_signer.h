// Signs a scenario's Blob, File and Batch requests with SharedKey, as the SDKs do, so that a
// scenario writes `request PUT file /devstoreaccount1/share/dir/f` without an Authorization header.
#pragma once

#include <httplib.h>

#include <string>

namespace bai::scenarios {

// Adds x-ms-date, x-ms-version (unless given), Content-Length (when there is a body) and
// Authorization to `request` (method, target and headers set; body as it will be sent).
void sign_shared_key(httplib::Request& request, const std::string& account, const std::string& base64_key);

// The same for the Batch service's scheme (ocp-date, its own string to sign).
void sign_batch_shared_key(httplib::Request& request, const std::string& account, const std::string& base64_key);

}  // namespace bai::scenarios
