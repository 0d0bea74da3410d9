#include "fake_storage/auth/sas.h"

#include <arpa/inet.h>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

std::string p(const StorageRequest& r, const char* name) { return r.param(name).value_or(""); }

[[noreturn]] void auth_failed(const std::string& detail) {
    fail(403, "AuthenticationFailed",
         "Server failed to authenticate the request. Make sure the value of Authorization header "
         "is formed correctly including the signature.\n" + detail);
}

std::optional<time::TimePoint> parse_sas_time(const std::string& text) {
    return time::parse_iso8601(text);
}

bool ipv4_in_range(const std::string& ip, const std::string& range) {
    auto to_number = [](const std::string& s, uint32_t& out) {
        in_addr a{};
        if (inet_pton(AF_INET, s.c_str(), &a) != 1) return false;
        out = ntohl(a.s_addr);
        return true;
    };
    uint32_t address = 0, low = 0, high = 0;
    size_t dash = range.find('-');
    if (!to_number(ip, address) || !to_number(range.substr(0, dash), low)) return false;
    high = low;
    if (dash != std::string::npos && !to_number(range.substr(dash + 1), high)) return false;
    return low <= address && address <= high;
}

bool is_account_sas(const StorageRequest& r) { return r.has_param("ss") || r.has_param("srt"); }

std::string canonical_resource(const std::string& account, const SasNeed& need,
                               const std::string& signed_resource) {
    std::string s = std::string(need.service == SasService::blob ? "/blob/" : "/file/") + account +
                    "/" + need.container;
    bool object_scope = signed_resource == "b" || signed_resource == "f" || signed_resource == "bs";
    if (object_scope) s += "/" + need.name;
    return s;
}

}  // namespace

bool has_sas(const StorageRequest& r) { return r.has_param("sig"); }

std::string sas_string_to_sign(const StorageRequest& r, const std::string& account,
                               const SasNeed& need) {
    const std::string sv = p(r, "sv");
    if (is_account_sas(r)) {
        std::string s = account + "\n" + p(r, "sp") + "\n" + p(r, "ss") + "\n" + p(r, "srt") + "\n" +
                        p(r, "st") + "\n" + p(r, "se") + "\n" + p(r, "sip") + "\n" + p(r, "spr") +
                        "\n" + sv + "\n";
        if (sv >= "2020-12-06") s += p(r, "ses") + "\n";
        return s;
    }
    std::string sr = p(r, "sr");
    std::string s = p(r, "sp") + "\n" + p(r, "st") + "\n" + p(r, "se") + "\n" +
                    canonical_resource(account, need, sr) + "\n" + p(r, "si") + "\n" + p(r, "sip") +
                    "\n" + p(r, "spr") + "\n" + sv + "\n";
    if (need.service == SasService::blob && sv >= "2018-11-09") {
        s += sr + "\n" + p(r, "sst") + "\n";
        if (sv >= "2020-12-06") s += p(r, "ses") + "\n";
    }
    s += p(r, "rscc") + "\n" + p(r, "rscd") + "\n" + p(r, "rsce") + "\n" + p(r, "rscl") + "\n" +
         p(r, "rsct");
    return s;
}

void verify_sas(const StorageRequest& r, const Account& account, const SasNeed& need,
                time::TimePoint now) {
    if (!r.has_param("sv") || !r.has_param("sp") || !r.has_param("se")) {
        auth_failed("A SAS needs sv, sp, se and sig.");
    }
    if (r.has_param("si")) auth_failed("Stored access policies (si) are not supported by the emulator.");

    // Signature first: nothing else in the token is trusted before it is verified.
    std::string string_to_sign = sas_string_to_sign(r, account.name, need);
    std::string signature = p(r, "sig");
    bool matched = false;
    for (const std::string* key : {&account.key1, &account.key2}) {
        auto secret = crypto::base64_decode(*key);
        if (secret && crypto::base64_encode(crypto::hmac_sha256(*secret, string_to_sign)) == signature) {
            matched = true;
        }
    }
    if (!matched) auth_failed("Signature did not match. String to sign used was " + string_to_sign);

    auto expiry = parse_sas_time(p(r, "se"));
    if (!expiry) auth_failed("se is not a valid ISO 8601 time.");
    std::optional<time::TimePoint> start;
    if (r.has_param("st")) {
        start = parse_sas_time(p(r, "st"));
        if (!start) auth_failed("st is not a valid ISO 8601 time.");
    }
    if (now > *expiry || (start && now < *start)) {
        auth_failed("Signature not valid in the specified time frame: Start [" + p(r, "st") +
                    "] - Expiry [" + p(r, "se") + "] - Current [" + time::format_rfc1123(now) + "]");
    }
    std::string protocol = p(r, "spr");
    if (!protocol.empty() && protocol != "https" && protocol != "https,http" && protocol != "http,https") {
        auth_failed("spr must be https or https,http.");
    }
    if (r.has_param("sip") && !ipv4_in_range(r.http->remote_addr, p(r, "sip"))) {
        fail(403, "AuthorizationSourceIPMismatch",
             "This request is not authorized to perform this operation using this source IP " +
                 r.http->remote_addr + ".");
    }

    std::string permissions = p(r, "sp");
    bool permitted = need.permissions.find_first_of(permissions) != std::string::npos;

    if (is_account_sas(r)) {
        char service = need.service == SasService::blob ? 'b' : 'f';
        if (p(r, "ss").find(service) == std::string::npos) {
            fail(403, "AuthorizationServiceMismatch",
                 "This request is not authorized to perform this operation using this service.");
        }
        char level = need.level == ResourceLevel::service     ? 's'
                     : need.level == ResourceLevel::container ? 'c'
                                                              : 'o';
        if (p(r, "srt").find(level) == std::string::npos) {
            fail(403, "AuthorizationResourceTypeMismatch",
                 "This request is not authorized to perform this operation using this resource type.");
        }
    } else {
        std::string sr = p(r, "sr");
        bool container_scope = sr == "c" || sr == "s";
        bool object_scope = sr == "b" || sr == "f" || sr == "bs";
        bool right_service = need.service == SasService::blob ? (sr == "c" || sr == "b" || sr == "bs")
                                                              : (sr == "s" || sr == "f");
        if (!right_service || (!container_scope && !object_scope)) {
            fail(403, "AuthorizationResourceTypeMismatch",
                 "This request is not authorized to perform this operation using this resource type.");
        }
        // A container SAS covers the container and its objects; an object SAS only its object.
        bool covers = need.level != ResourceLevel::service &&
                      (container_scope || need.level == ResourceLevel::object);
        if (!covers) {
            fail(403, "AuthorizationResourceTypeMismatch",
                 "This request is not authorized to perform this operation using this resource type.");
        }
    }
    if (!permitted) {
        fail(403, "AuthorizationPermissionMismatch",
             "This request is not authorized to perform this operation using this permission.");
    }
}

}  // namespace bai::storage
