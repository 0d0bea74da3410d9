#include "emulator/batch/batch_shared_key.h"

#include <map>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/text/ascii.h"
#include "emulator/batch/batch_error.h"
#include "fake_storage/http/storage_request.h"

namespace bai::batch {
namespace {

constexpr const char* kSignedHeaders[] = {"content-encoding", "content-language", "content-length", "content-md5",
                                          "content-type", "date", "if-modified-since", "if-match",
                                          "if-none-match", "if-unmodified-since", "range"};

}  // namespace

BatchError authentication_failed(const std::string& detail) {
    return BatchError(403, "AuthenticationFailed",
                      "Server failed to authenticate the request. Make sure the value of Authorization header is "
                      "formed correctly including the signature.",
                      {{"AuthenticationErrorDetail", detail}});
}

std::string batch_string_to_sign(const httplib::Request& request, const std::string& account) {
    std::string out = request.method + "\n";
    for (const char* name : kSignedHeaders) out.append(request.get_header_value(name)).append("\n");
    std::map<std::string, std::string> ocp;
    for (const auto& [name, value] : request.headers) {
        std::string lower = text::lower(name);
        if (lower.find("ocp-") != std::string::npos && !value.empty()) ocp.emplace(lower, value);
    }
    for (const auto& [name, value] : ocp) out.append(name).append(":").append(value).append("\n");
    std::string_view target = request.target.empty() ? std::string_view(request.path) : request.target;
    size_t question = target.find('?');
    out.append("/").append(account).append(target.substr(0, question));
    // The first value of each parameter, decoded ('+' is a space), names sorted.
    std::map<std::string, std::string> query;
    std::string_view rest = question == std::string_view::npos ? "" : target.substr(question + 1);
    while (!rest.empty()) {
        std::string_view pair = rest.substr(0, rest.find('&'));
        rest = pair.size() < rest.size() ? rest.substr(pair.size() + 1) : "";
        size_t eq = pair.find('=');
        auto name = storage::percent_decode(pair.substr(0, eq), true);
        auto value = storage::percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
        if (name && value && !value->empty()) query.emplace(*name, *value);
    }
    for (const auto& [name, value] : query) out.append("\n").append(name).append(":").append(value);
    return out;
}

BatchAccount check_shared_key(const httplib::Request& request, const BatchAccountRegistry& accounts) {
    std::string header = request.get_header_value("Authorization");
    const std::string scheme = "SharedKey ";
    size_t colon = header.rfind(':');
    if (header.rfind(scheme, 0) != 0 || colon == std::string::npos || colon < scheme.size()) {
        throw authentication_failed("The Authorization header is not 'SharedKey ACCOUNT:SIGNATURE'");
    }
    std::string name = header.substr(scheme.size(), colon - scheme.size());
    std::optional<BatchAccount> account = accounts.find(name);
    if (!account) throw authentication_failed("The account '" + name + "' does not exist in the emulator");
    std::string to_sign = batch_string_to_sign(request, name);
    const std::string signature = header.substr(colon + 1);
    auto signed_with = [&](const std::string& key) {
        return !key.empty() &&
               crypto::base64_encode(crypto::hmac_sha256(crypto::base64_decode(key).value_or(""), to_sign)) == signature;
    };
    if (!signed_with(account->key) && !signed_with(account->secondary)) {
        throw authentication_failed("The MAC signature found in the HTTP request is not the same as any computed "
                                    "signature. The emulator signed '" + to_sign + "'");
    }
    return *account;
}

}  // namespace bai::batch
