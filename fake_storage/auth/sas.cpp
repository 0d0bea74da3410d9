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

// Every parameter that a SAS signs or that says how it is read.
constexpr const char* kSasParameters[] = {"sv",   "ss",   "srt",  "sp",    "st",    "se",    "sip",
                                          "spr",  "sig",  "sr",   "si",    "ses",   "sdd",   "sst",
                                          "skoid", "sktid", "skt", "ske",  "sks",   "skv",   "saoid",
                                          "suoid", "scid", "rscc", "rscd", "rsce",  "rscl",  "rsct",
                                          "skdutid", "sduoid", "srh", "srq"};

[[noreturn]] void resource_type_mismatch() {
    fail(403, "AuthorizationResourceTypeMismatch",
         "This request is not authorized to perform this operation using this resource type.");
}

// An operation that no SAS of this kind may perform (an ACL, the container itself with a
// service SAS): the service's "other authorization errors".
[[noreturn]] void not_authorized() {
    fail(403, "AuthorizationFailure", "This request is not authorized to perform this operation.");
}

char level_letter(ResourceLevel level) {
    return level == ResourceLevel::service ? 's' : level == ResourceLevel::container ? 'c' : 'o';
}

bool is_account_sas(const StorageRequest& r) { return r.has_param("ss") || r.has_param("srt"); }

// The signed snapshot time: sst, or for a SAS of a snapshot (sr=bs) the snapshot the URL names,
// for one of a version (sr=bv) the version (the SDKs sign it without sending sst).
std::string signed_snapshot_time(const StorageRequest& r) {
    const std::string sr = r.param("sr").value_or("");
    if (r.has_param("sst") || (sr != "bs" && sr != "bv")) return r.param("sst").value_or("");
    return r.param(sr == "bs" ? "snapshot" : "versionid").value_or("");
}

std::string canonical_resource(const std::string& account, const SasNeed& need,
                               const std::string& signed_resource) {
    std::string s = std::string(need.service == SasService::blob ? "/blob/" : "/file/") + account +
                    "/" + need.container;
    bool object_scope = signed_resource == "b" || signed_resource == "f" || signed_resource == "bs" || signed_resource == "bv";
    if (object_scope) s += "/" + need.name;
    return s;
}

}  // namespace

bool has_sas(const StorageRequest& r) { return r.has_param("sig"); }

std::string user_delegation_key_value(const Account& account, const UserDelegationKey& k) {
    auto secret = crypto::base64_decode(account.key1);
    const std::string fields = k.object_id + "\n" + k.tenant_id + "\n" + k.start + "\n" + k.expiry + "\n" + k.service +
                               "\n" + k.version;
    return crypto::base64_encode(crypto::hmac_sha256(secret.value_or(account.key1), fields));
}

namespace {

bool is_user_delegation(const StorageRequest& r) { return r.has_param("skoid"); }

// A user delegation SAS's string-to-sign, by its version (as the SDKs write it).
std::string user_delegation_string_to_sign(const StorageRequest& r, const std::string& account, const SasNeed& need) {
    const std::string sv = p(r, "sv");
    std::string s = p(r, "sp") + "\n" + p(r, "st") + "\n" + p(r, "se") + "\n" +
                    canonical_resource(account, need, p(r, "sr")) + "\n" + p(r, "skoid") + "\n" + p(r, "sktid") + "\n" +
                    p(r, "skt") + "\n" + p(r, "ske") + "\n" + p(r, "sks") + "\n" + p(r, "skv") + "\n";
    if (sv >= "2025-07-05") {
        s += p(r, "saoid") + "\n" + p(r, "suoid") + "\n" + p(r, "scid") + "\n" + p(r, "skdutid") + "\n" +
             p(r, "sduoid") + "\n";
    } else if (sv >= "2020-02-10") {
        s += p(r, "saoid") + "\n" + p(r, "suoid") + "\n" + p(r, "scid") + "\n";
    }
    s += p(r, "sip") + "\n" + p(r, "spr") + "\n" + sv + "\n" + p(r, "sr") + "\n" + signed_snapshot_time(r) + "\n";
    if (sv >= "2020-12-06") s += p(r, "ses") + "\n";
    if (sv >= "2026-04-06") s += p(r, "srh") + "\n" + p(r, "srq") + "\n";
    s += p(r, "rscc") + "\n" + p(r, "rscd") + "\n" + p(r, "rsce") + "\n" + p(r, "rscl") + "\n" + p(r, "rsct");
    return s;
}

}  // namespace

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
        s += sr + "\n" + signed_snapshot_time(r) + "\n";
        if (sv >= "2020-12-06") s += p(r, "ses") + "\n";
    }
    s += p(r, "rscc") + "\n" + p(r, "rscd") + "\n" + p(r, "rsce") + "\n" + p(r, "rscl") + "\n" +
         p(r, "rsct");
    return s;
}

SasGrant verify_sas(const StorageRequest& r, const Account& account, const SasNeed& need,
                    time::TimePoint now, bool https, const PolicyLookup& policies) {
    // A parameter given twice leaves the service two tokens to choose from: refused whole.
    for (const char* name : kSasParameters) {
        auto it = r.query.find(name);
        if (it != r.query.end() && it->second.size() > 1) {
            auth_failed(std::string("The SAS parameter '") + name + "' appears more than once.");
        }
    }
    // A stored access policy gives what the SAS leaves out (a field in both is refused).
    std::optional<StoredPolicy> policy;
    if (r.has_param("si")) {
        if (is_account_sas(r) || is_user_delegation(r)) auth_failed("Only a service SAS names a stored access policy.");
        if (policies) policy = policies(account.name, need.container, p(r, "si"));
        if (!policy) auth_failed("The stored access policy '" + p(r, "si") + "' does not exist.");
        if ((r.has_param("sp") && !policy->permission.empty()) || (r.has_param("se") && policy->expiry) ||
            (r.has_param("st") && policy->start)) {
            auth_failed("A SAS and its stored access policy both give st, se or sp.");
        }
    }
    const std::string permission_text = r.has_param("sp") || !policy ? p(r, "sp") : policy->permission;
    if (!r.has_param("sv") || permission_text.empty() || (!r.has_param("se") && !(policy && policy->expiry))) {
        auth_failed("A SAS needs sv, sp, se and sig.");
    }

    // Signature first: nothing else in the token is trusted before it is verified.
    std::string string_to_sign;
    std::string signature = p(r, "sig");
    bool matched = false;
    if (is_user_delegation(r)) {
        if (is_account_sas(r) || need.service != SasService::blob) auth_failed("A user delegation SAS is a Blob service SAS.");
        string_to_sign = user_delegation_string_to_sign(r, account.name, need);
        const std::string key = user_delegation_key_value(
            account, {p(r, "skoid"), p(r, "sktid"), p(r, "skt"), p(r, "ske"), p(r, "sks"), p(r, "skv")});
        matched = crypto::base64_encode(crypto::hmac_sha256(*crypto::base64_decode(key), string_to_sign)) == signature;
    } else {
        string_to_sign = sas_string_to_sign(r, account.name, need);
        for (const std::string* key : {&account.key1, &account.key2}) {
            auto secret = crypto::base64_decode(*key);
            if (secret && crypto::base64_encode(crypto::hmac_sha256(*secret, string_to_sign)) == signature) {
                matched = true;
            }
        }
    }
    if (!matched) auth_failed("Signature did not match. String to sign used was " + string_to_sign);
    if (is_user_delegation(r)) {
        auto key_start = parse_sas_time(p(r, "skt"));
        auto key_expiry = parse_sas_time(p(r, "ske"));
        if (!key_start || !key_expiry || now < *key_start || now > *key_expiry) {
            auth_failed("The user delegation key is not valid at this time.");
        }
    }

    // The window, from the SAS or its policy (no start: valid from the earliest time).
    time::TimePoint expiry_at;
    if (policy && policy->expiry) {
        expiry_at = *policy->expiry;
    } else if (auto se = parse_sas_time(p(r, "se"))) {
        expiry_at = *se;
    } else {
        auth_failed("se is not a valid ISO 8601 time.");
    }
    time::TimePoint start_at = time::TimePoint::min();
    if (r.has_param("st")) {
        auto st = parse_sas_time(p(r, "st"));
        if (!st) auth_failed("st is not a valid ISO 8601 time.");
        start_at = *st;
    } else if (policy && policy->start) {
        start_at = *policy->start;
    }
    if (now > expiry_at || now < start_at) {
        auth_failed("Signature not valid in the specified time frame: Start [" + p(r, "st") +
                    "] - Expiry [" + p(r, "se") + "] - Current [" + time::format_rfc1123(now) + "]");
    }
    std::string protocol = p(r, "spr");
    if (!protocol.empty() && protocol != "https" && protocol != "https,http") {
        auth_failed("spr must be https or https,http.");
    }
    if (protocol == "https" && !https) {
        fail(403, "AuthorizationProtocolMismatch",
             "This request is not authorized to perform this operation using this protocol.");
    }
    if (r.has_param("sip") && !ipv4_in_range(r.http->remote_addr, p(r, "sip"))) {
        fail(403, "AuthorizationSourceIPMismatch",
             "This request is not authorized to perform this operation using this source IP " +
                 r.http->remote_addr + ".");
    }

    const SasRule& rule = need.rule;
    const std::string* letters = nullptr;
    if (is_account_sas(r)) {
        char service = need.service == SasService::blob ? 'b' : 'f';
        if (p(r, "ss").find(service) == std::string::npos) {
            fail(403, "AuthorizationServiceMismatch",
                 "This request is not authorized to perform this operation using this service.");
        }
        if (rule.level && p(r, "srt").find(level_letter(*rule.level)) == std::string::npos) {
            resource_type_mismatch();
        }
        if (rule.account_letters.empty()) not_authorized();
        letters = &rule.account_letters;
    } else {
        std::string sr = p(r, "sr");
        bool container_scope = sr == "c" || sr == "s";
        bool object_scope = sr == "b" || sr == "f" || sr == "bs" || sr == "bv";
        bool right_service = need.service == SasService::blob ? (sr == "c" || sr == "b" || sr == "bs" || sr == "bv")
                                                              : (sr == "s" || sr == "f");
        if (!right_service || (!container_scope && !object_scope)) resource_type_mismatch();
        if (rule.scope == ServiceSasScope::none || rule.service_letters.empty()) not_authorized();
        if (object_scope && rule.scope != ServiceSasScope::container_or_object) resource_type_mismatch();
        letters = &rule.service_letters;
    }
    const std::string& permissions = permission_text;
    std::string granted;
    for (char letter : *letters) {
        if (permissions.find(letter) != std::string::npos) granted += letter;
    }
    if (granted.empty()) {
        fail(403, "AuthorizationPermissionMismatch",
             "This request is not authorized to perform this operation using this permission.");
    }
    return SasGrant{rule.create_new_only && granted == "c"};
}

}  // namespace bai::storage
