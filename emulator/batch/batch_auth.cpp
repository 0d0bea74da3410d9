#include "emulator/batch/batch_auth.h"

#include "common/http/proxied_host.h"
#include "common/text/ascii.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/batch_shared_key.h"

namespace bai::batch {
namespace {

constexpr const char* kBatchAudience = "https://batch.core.windows.net/";

// The service's answer to a bearer token it does not take (its message lacks the SharedKey
// one's "including the signature").
BatchError token_refused(const std::string& detail) {
    return BatchError(
        401, "AuthenticationFailed",
        "Server failed to authenticate the request. Make sure the value of Authorization header is "
        "formed correctly.",
        {{"AuthenticationErrorDetail", detail}});
}

void check_bearer_token(const identity::TokenService& tokens, const std::string& token) {
    const identity::TokenVerdict verdict = tokens.verify(token, {kBatchAudience});
    switch (verdict.check) {
        case identity::TokenCheck::valid:
            return;
        case identity::TokenCheck::expired:
            throw token_refused("Lifetime validation failed. The token is expired.");
        case identity::TokenCheck::wrong_audience:
            throw token_refused(
                "The access token has been obtained from wrong audience or resource '" +
                verdict.claims.value("aud", std::string()) +
                "'. It should exactly match (including forward slash) with one of the allowed "
                "audiences '" +
                kBatchAudience + "'");
        case identity::TokenCheck::invalid:
            break;
    }
    throw token_refused(
        "Signature validation failed. The access token is not one the emulator's sign-in service "
        "issued.");
}

}  // namespace

void take_account_from_path(httplib::Request& request, const BatchAccountRegistry& accounts) {
    for (auto it = request.headers.begin(); it != request.headers.end();) {
        it = text::iequals(it->first, kPathAccountHeader) ? request.headers.erase(it)
                                                          : std::next(it);
    }
    // ACCOUNT.REGION.batch.azure.com through the proxy front door: the account is the host's.
    if (const std::string& host = http::proxied_host(); host.ends_with(".batch.azure.com")) {
        request.headers.emplace(kPathAccountHeader, host.substr(0, host.find('.')));
        return;
    }
    const std::string& path = request.path;
    if (path.size() < 2 || path[0] != '/') return;
    const size_t slash = path.find('/', 1);
    if (slash == std::string::npos) return;
    const std::string name = path.substr(1, slash - 1);
    if (!accounts.find(name)) return;
    request.path = path.substr(slash);
    request.headers.emplace(kPathAccountHeader, name);
}

BatchAccount authenticate(const httplib::Request& request, const BatchAccountRegistry& accounts,
                          const identity::TokenService* tokens) {
    const std::string header = std::string(text::trim(request.get_header_value("Authorization")));
    if (header.empty()) {
        throw BatchError(401, "AuthenticationFailed",
                         "The request is not authenticated: it has no Authorization header.",
                         {{"AuthenticationErrorDetail", "The Authorization header was not found"}});
    }
    const std::string in_path = request.get_header_value(kPathAccountHeader);
    const size_t space = header.find(' ');
    const std::string scheme = header.substr(0, space);
    if (text::iequals(scheme, "Bearer")) {
        const std::string token = space == std::string::npos
                                      ? std::string()
                                      : std::string(text::trim(header.substr(space + 1)));
        if (token.empty()) throw token_refused("The Authorization header carries no access token.");
        if (in_path.empty()) {
            throw token_refused(
                "A bearer token does not name the Batch account: send the request to the account's "
                "accountEndpoint (https://HOST:PORT/ACCOUNT/...).");
        }
        if (tokens != nullptr) check_bearer_token(*tokens, token);
        std::optional<BatchAccount> account = accounts.find(in_path);
        if (!account)
            throw token_refused("The account '" + in_path + "' does not exist in the emulator");
        return *account;
    }
    if (scheme != "SharedKey") {
        throw token_refused(
            "The Authorization header's scheme is neither 'SharedKey' nor 'Bearer'.");
    }
    BatchAccount account = check_shared_key(request, accounts);
    if (!in_path.empty() && in_path != account.name) {
        throw authentication_failed("The request is signed for the account '" + account.name +
                                    "' but addressed to the account '" + in_path + "'");
    }
    return account;
}

}  // namespace bai::batch
