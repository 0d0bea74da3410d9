// The request pipeline shared by the Blob and File services: parse the path-style target, find
// the account, authenticate (SharedKey, SAS, anonymous access), take the body (streamed into a
// content file for uploads), run the operation, and answer errors the way the service does.
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <string>

#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/auth/sas.h"
#include "fake_storage/engine/conditions.h"
#include "fake_storage/engine/content_files.h"
#include "fake_storage/engine/service_settings.h"
#include "fake_storage/http/request_faults.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// How a request proved who sent it.
enum class Authorization { shared_key, sas, bearer, anonymous };

struct StorageCall {
    StorageRequest& request;
    httplib::Response& response;
    const Account& account;
    std::string body;                        // operations that do not stream
    std::unique_ptr<ContentWriter> content;  // operations that stream their body
    Authorization authorization = Authorization::anonymous;
    SasGrant sas;                            // what the SAS allows, when authorization is sas
};

// The request's conditional headers, and create_new_only when its SAS may create but not replace.
Conditions write_conditions(const StorageCall& call);

struct Operation {
    std::string name;
    SasNeed need;
    bool streams_body = false;
    bool digest_body = false;  // compute the MD5 of a streamed body
    // A read that anonymous clients may do when the resource is public.
    std::function<bool(const StorageRequest&)> is_public;
    std::function<void(StorageCall&)> run;
    // The largest streamed body the operation takes (0: any): a larger one is refused with 413
    // RequestBodyTooLarge before it is read (by its Content-Length) or as soon as it passes it.
    std::uint64_t max_body = 0;
    bool crc64_body = false;  // compute the CRC64 of a streamed body
    // Served to a bearer token only (Get User Delegation Key): a key or a SAS is refused, 403
    // AuthenticationFailed. The emulator accepts any bearer token, as its ARM endpoint does.
    bool bearer_only = false;
};

class StorageEndpoint {
public:
    // Finds the request's operation; may normalize the request first (the Blob service's names).
    using Resolver = std::function<Operation(StorageRequest&)>;

    StorageEndpoint(std::string server_name, AccountRegistry& accounts, ContentFiles& files,
                    Resolver resolve);
    // Answers a request, as http::LeanListener's handler.
    void serve(const httplib::Request& http, httplib::Response& response, const httplib::ContentReader* body) {
        serve_request(http, response, body, true);
    }
    // One request of a batch (Blob Batch): served as any other, authenticated on its own, without
    // the scenario's injected faults (the batch request had its turn).
    void serve_part(const httplib::Request& http, httplib::Response& response) {
        serve_request(http, response, nullptr, false);
    }
    // Faults injected by scenarios (none when null); `faults` outlives the endpoint.
    void set_faults(RequestFaults* faults) { faults_ = faults; }
    // Whether a bearer token is one the service takes (the daemon's sign-in service's, for
    // Storage, under --strict-auth); without one, any bearer token is taken, as the SDKs' recorded
    // tests send them.
    using TokenCheck = std::function<bool(const std::string& token)>;
    void set_token_check(TokenCheck check) { token_check_ = std::move(check); }
    // The accounts' settings of this service ("blob" or "file"): CORS rules answer preflight
    // OPTIONS requests and add their headers to answers (none when never set).
    // The stored access policies that a SAS may name (si); none when not set.
    void set_policy_lookup(PolicyLookup lookup) { policies_ = std::move(lookup); }
    void set_settings(ServiceSettings* settings, std::string service) {
        settings_ = settings;
        service_ = std::move(service);
    }

    static constexpr size_t kMaxXmlBody = 4 * 1024 * 1024;

private:
    // `with_faults`: a request of its own (false: a batch's part).
    void serve_request(const httplib::Request& http, httplib::Response& response, const httplib::ContentReader* body,
                       bool with_faults);
    void take_body(const Operation& op, StorageCall& call, const httplib::ContentReader* reader);
    void authenticate(StorageCall& call, const Operation& op);

    std::string server_name_;
    AccountRegistry& accounts_;
    ContentFiles& files_;
    Resolver resolve_;
    PolicyLookup policies_;
    RequestFaults* faults_ = nullptr;
    TokenCheck token_check_;
    ServiceSettings* settings_ = nullptr;
    std::string service_;
};

}  // namespace bai::storage
