#include "fake_storage/auth/shared_key_signer.h"

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/time/timestamps.h"
#include "fake_storage/auth/shared_key.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

void sign_shared_key(httplib::Request& request, const std::string& account, const std::string& base64_key,
                     long long content_length) {
    // The service refuses dates more than 15 minutes off its own: this one is real time.
    request.set_header("x-ms-date", time::format_rfc1123(time::now()));
    if (!request.has_header("x-ms-version")) request.set_header("x-ms-version", "2020-04-08");
    const long long length = content_length >= 0 ? content_length : static_cast<long long>(request.body.size());
    if (length > 0 || content_length == 0) {
        request.set_header("Content-Length", std::to_string(length));
        if (length > 0 && !request.has_header("Content-Type")) request.set_header("Content-Type", "application/octet-stream");
    }
    request.path = request.target.substr(0, request.target.find('?'));
    StorageRequest parsed = parse_storage_request(request);
    const std::string to_sign = shared_key_string_to_sign(parsed, parsed.raw_path);
    const std::string key = crypto::base64_decode(base64_key).value_or("");
    request.set_header("Authorization",
                       "SharedKey " + account + ":" + crypto::base64_encode(crypto::hmac_sha256(key, to_sign)));
}

}  // namespace bai::storage
