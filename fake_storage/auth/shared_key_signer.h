// Signing a Blob or File request with SharedKey, as the SDKs do (for the emulator's own clients:
// scenario replay, the load generator, the blob filesystem over REST).
#pragma once

#include <httplib.h>

#include <string>

namespace bai::storage {

// Adds x-ms-date (now), x-ms-version (unless given), Content-Length and Content-Type (when there
// is a body) and Authorization to `request` (method, target and headers set; the body as it will
// be sent). With `content_length` (a body sent from a provider), that Content-Length is signed.
void sign_shared_key(httplib::Request& request, const std::string& account, const std::string& base64_key,
                     long long content_length = -1);

}  // namespace bai::storage
