#include "fake_storage/auth/sas_signer.h"

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/text/percent_encoding.h"

namespace bai::storage {
namespace {

// A version whose service string-to-sign has no signedResource/snapshot lines for blobs.
constexpr const char* kVersion = "2018-03-28";

}  // namespace

std::string encode_url_path(const std::string& path) { return text::percent_encode(path, true); }

std::string read_sas_query(const Account& account, SasService service, const std::string& container,
                           const std::string& name, time::TimePoint expiry) {
    return service_sas_query(account, service, container, name, "r", expiry);
}

std::string service_sas_query(const Account& account, SasService service, const std::string& container,
                              const std::string& name, const std::string& permissions, time::TimePoint expiry) {
    const std::string se = time::format_iso8601(expiry, 0);
    const std::string resource = std::string(service == SasService::blob ? "/blob/" : "/file/") + account.name + "/" +
                                 container + (name.empty() ? "" : "/" + name);
    // sp, st, se, canonical resource, si, sip, spr, sv, then rscc, rscd, rsce, rscl, rsct.
    const std::string to_sign =
        permissions + "\n\n" + se + "\n" + resource + "\n\n\n\n" + kVersion + "\n\n\n\n\n";
    std::optional<std::string> key = crypto::base64_decode(account.key1);
    std::string sig = crypto::base64_encode(crypto::hmac_sha256(key.value_or(""), to_sign));
    const char* sr = name.empty() ? (service == SasService::blob ? "c" : "s") : (service == SasService::blob ? "b" : "f");
    return std::string("sv=") + kVersion + "&sr=" + sr + "&sp=" + permissions + "&se=" + text::percent_encode(se) +
           "&sig=" + text::percent_encode(sig);
}

}  // namespace bai::storage
