#include "fake_storage/auth/shared_key.h"

#include <algorithm>
#include <map>
#include <vector>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return "";
    size_t e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

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
    std::string content_length = r.header("Content-Length");
    if (content_length == "0") content_length.clear();
    std::string s = r.method + "\n";
    for (const char* h : {"Content-Encoding", "Content-Language"}) s += r.header(h) + "\n";
    s += content_length + "\n";
    for (const char* h : {"Content-MD5", "Content-Type", "Date", "If-Modified-Since", "If-Match",
                          "If-None-Match", "If-Unmodified-Since", "Range"}) {
        s += r.header(h) + "\n";
    }
    std::map<std::string, std::string> ms_headers;
    for (const auto& [name, value] : r.http->headers) {
        std::string key = lower(name);
        if (key.rfind("x-ms-", 0) != 0) continue;
        auto [it, inserted] = ms_headers.emplace(key, trim(value));
        if (!inserted) {
            it->second += ',';
            it->second += trim(value);
        }
    }
    for (const auto& [name, value] : ms_headers) s += name + ":" + value + "\n";
    s += "/" + r.account + std::string(resource_path);
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
    std::vector<std::string> paths = {r.raw_path};
    if (auto decoded = percent_decode(r.raw_path, false); decoded && *decoded != r.raw_path) {
        paths.push_back(*decoded);
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
