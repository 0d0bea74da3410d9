#include "scenarios/replay/storage_signer.h"

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_shared_key.h"

namespace bai::scenarios {

void sign_batch_shared_key(httplib::Request& request, const std::string& account, const std::string& base64_key) {
    request.set_header("ocp-date", time::format_rfc1123(time::now()));
    // httplib sends a Content-Length with every POST, PUT and PATCH (0 without a body): signed as sent.
    if (!request.body.empty() || request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
        request.set_header("Content-Length", std::to_string(request.body.size()));
    }
    if (!request.body.empty() && !request.has_header("Content-Type")) {
        request.set_header("Content-Type", "application/json; odata=minimalmetadata");
    }
    std::string key = crypto::base64_decode(base64_key).value_or("");
    std::string to_sign = batch::batch_string_to_sign(request, account);
    request.set_header("Authorization", "SharedKey " + account + ":" + crypto::base64_encode(crypto::hmac_sha256(key, to_sign)));
}

}  // namespace bai::scenarios
