#include "fake_storage/auth/shared_key.h"

#include <strings.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/text/ascii.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

bool constant_time_equal(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

[[noreturn]] void authentication_failed(const std::string& detail) {
    fail(403, "AuthenticationFailed",
         "Server failed to authenticate the request. Make sure the value of Authorization header "
         "is formed correctly including the signature.\n" + detail);
}

}  // namespace

std::string shared_key_string_to_sign(const StorageRequest& r, std::string_view resource_path) {
    // The standard headers in string-to-sign order; one pass over the request's headers.
    static constexpr const char* kStandard[] = {
        "Content-Encoding", "Content-Language", "Content-Length", "Content-MD5",
        "Content-Type", "Date", "If-Modified-Since", "If-Match", "If-None-Match",
        "If-Unmodified-Since", "Range"};
    const std::string* standard[std::size(kStandard)] = {};
    std::map<std::string, std::string> ms_headers;
    for (const auto& [name, value] : r.http->headers) {
        if (name.size() > 5 && strncasecmp(name.c_str(), "x-ms-", 5) == 0) {
            auto [it, inserted] = ms_headers.emplace(text::lower(name), text::trim(value));
            if (!inserted) {
                it->second += ',';
                it->second += text::trim(value);
            }
            continue;
        }
        for (size_t i = 0; i < std::size(kStandard); ++i) {
            if (standard[i] == nullptr && strcasecmp(name.c_str(), kStandard[i]) == 0) {
                standard[i] = &value;
            }
        }
    }
    std::string s = r.method + "\n";
    for (size_t i = 0; i < std::size(kStandard); ++i) {
        const std::string* value = standard[i];
        bool zero_length = i == 2 && value != nullptr && *value == "0";  // Content-Length: 0
        if (value != nullptr && !zero_length) s += *value;
        s += '\n';
    }
    for (const auto& [name, value] : ms_headers) {
        s += name;
        s += ':';
        s += value;
        s += '\n';
    }
    s += "/" + r.account;
    s += resource_path;
    for (const auto& [name, values] : r.query) {
        std::vector<std::string> sorted = values;
        std::sort(sorted.begin(), sorted.end());
        s += "\n" + name + ":";
        for (size_t i = 0; i < sorted.size(); ++i) {
            if (i > 0) s += ',';
            s += sorted[i];
        }
    }
    return s;
}

void verify_shared_key(const StorageRequest& r, const Account& account) {
    std::string authorization = r.header("Authorization");
    const std::string scheme = "SharedKey ";
    if (authorization.rfind(scheme, 0) != 0) {
        authentication_failed("The authentication scheme is not SharedKey.");
    }
    std::string credentials = authorization.substr(scheme.size());
    size_t colon = credentials.rfind(':');
    if (colon == std::string::npos || credentials.substr(0, colon) != account.name) {
        authentication_failed("The Authorization header names another account than the URL.");
    }
    std::string signature = credentials.substr(colon + 1);
    if (!r.has_header("x-ms-date") && !r.has_header("Date")) {
        authentication_failed("Request date header not specified (x-ms-date or Date).");
    }
    std::vector<std::string> paths;
    auto add_path = [&](const std::string& path) {
        paths.push_back(path);
        if (auto decoded = percent_decode(path, false); decoded && *decoded != path) paths.push_back(*decoded);
    };
    // A host-style request was signed for the path it was sent with, which has no account (as
    // the cloud checks it); a path-style one for its own path.
    if (!r.host_style) add_path(r.raw_path);
    // A batch's part is signed for the path its request line gave, which has no account.
    if (r.batch_part || r.host_style) {
        const size_t after_account = r.raw_path.find('/', 1);
        add_path(after_account == std::string::npos ? "/" : r.raw_path.substr(after_account));
    }
    std::string first_string_to_sign;
    for (const std::string& path : paths) {
        std::string string_to_sign = shared_key_string_to_sign(r, path);
        if (first_string_to_sign.empty()) first_string_to_sign = string_to_sign;
        for (const std::string* key : {&account.key1, &account.key2}) {
            auto secret = crypto::base64_decode(*key);
            if (!secret) continue;
            std::string expected = crypto::base64_encode(crypto::hmac_sha256(*secret, string_to_sign));
            if (constant_time_equal(expected, signature)) return;
        }
    }
    authentication_failed("The MAC signature found in the HTTP request '" + signature +
                          "' is not the same as any computed signature. Server used following "
                          "string to sign: '" + first_string_to_sign + "'.");
}

}  // namespace bai::storage
