#include "fake_storage/http/storage_endpoint.h"

#include <optional>
#include <string_view>
#include <thread>

#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "fake_storage/auth/shared_key.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/cors.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

// The client went away (or broke the framing) before its body's end: what came is not stored,
// and the answer is for the log only.
[[noreturn]] void body_ended_early() {
    fail(400, "InvalidInput", "The request body ended before its Content-Length (or its last chunk).");
}

// 413 RequestBodyTooLarge; `unread`: the rest of the body was not read, so the connection ends.
[[noreturn]] void body_too_large(httplib::Response& response, bool unread) {
    if (unread) response.set_header("Connection", "close");
    fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
}

}  // namespace

StorageEndpoint::StorageEndpoint(std::string server_name, AccountRegistry& accounts,
                                 ContentFiles& files, Resolver resolve)
    : server_name_(std::move(server_name)),
      accounts_(accounts),
      files_(files),
      resolve_(std::move(resolve)) {}

void StorageEndpoint::take_body(const Operation& op, StorageCall& call,
                                const httplib::ContentReader* reader) {
    if (reader == nullptr) return;
    const httplib::ContentReader& read = *reader;
    // A body announced larger than the operation takes is refused unread: the connection is
    // closed rather than drained (the listener lingers so that the client reads the 413).
    const std::uint64_t limit = op.streams_body ? op.max_body : kMaxXmlBody;  // 0: any
    if (limit > 0 && call.request.has_header("Content-Length") &&
        std::stoull(call.request.header("Content-Length")) > limit) {
        body_too_large(call.response, true);
    }
    // Otherwise the whole body is read, even after a failure, so that the connection stays usable;
    // but a streamed (chunked) one stops at the limit.
    std::exception_ptr failure;
    if (op.streams_body) {
        call.content = files_.begin(op.digest_body, op.crc64_body);
        ContentWriter* writer = call.content.get();
        bool over = false;
        bool whole = read([&](const char* data, size_t size) {
            if (limit > 0 && writer->size() + size > limit) {
                over = true;
                return false;
            }
            if (failure) return true;
            try {
                writer->append(std::string_view(data, size));
            } catch (...) {
                failure = std::current_exception();
            }
            return true;
        });
        if (over) body_too_large(call.response, true);
        if (failure) std::rethrow_exception(failure);
        if (!whole) body_ended_early();
        return;
    }
    bool too_large = false;
    bool whole = read([&](const char* data, size_t size) {
        if (call.body.size() + size > kMaxXmlBody) too_large = true;
        if (!too_large) call.body.append(data, size);
        return true;
    });
    if (!whole) body_ended_early();
    if (too_large) body_too_large(call.response, false);
}

Conditions write_conditions(const StorageCall& call) {
    Conditions conditions = read_conditions(call.request);
    conditions.create_new_only = call.authorization == Authorization::sas && call.sas.create_new_only;
    return conditions;
}

void StorageEndpoint::authenticate(StorageCall& call, const Operation& op) {
    const StorageRequest& request = call.request;
    if (op.bearer_only) {
        if (!text::lower(request.header("Authorization")).starts_with("bearer ")) {
            throw StorageError(403, "AuthenticationFailed",
                               "Server failed to authenticate the request. Make sure the value of Authorization "
                               "header is formed correctly including the signature.",
                               "Only authentication scheme Bearer is supported");
        }
        const std::string token(text::trim(request.header("Authorization").substr(7)));
        if (token_check_ && !token_check_(token)) {
            throw StorageError(401, "InvalidAuthenticationInfo",
                               "Server failed to authenticate the request. Please refer to the information in the "
                               "www-authenticate header.",
                               "The access token is not one of the emulator's sign-in service for Storage "
                               "(https://storage.azure.com/), or it has expired");
        }
        call.authorization = Authorization::bearer;
    } else if (request.has_header("Authorization")) {
        verify_shared_key(request, call.account);
        call.authorization = Authorization::shared_key;
    } else if (has_sas(request)) {
        call.sas = verify_sas(request, call.account, op.need, time::now(), false, policies_);
        call.authorization = Authorization::sas;
    } else if (!(op.is_public && op.is_public(request))) {
        if (request.method == "GET" || request.method == "HEAD") {
            fail(404, "ResourceNotFound", "The specified resource does not exist.");
        }
        fail(401, "NoAuthenticationInformation",
             "Server failed to authenticate the request. Please refer to the information in the "
             "www-authenticate header.");
    }
}

void StorageEndpoint::serve_request(const httplib::Request& http, httplib::Response& res,
                                    const httplib::ContentReader* reader, bool with_faults) {
    // A body left unread (the request was refused before its operation read it) is read and
    // dropped by the listener, which keeps the connection in step.
    std::optional<StorageRequest> parsed;
    std::optional<Account> account;
    try {
        if (faults_ && with_faults) {
            if (auto fault = faults_->next()) {
                if (fault->stall.count() > 0) std::this_thread::sleep_for(fault->stall);
                if (fault->status != 0) fail_as_injected(fault->status);
            }
        }
        parsed = parse_storage_request(http);
        StorageRequest& request = *parsed;
        request.batch_part = !with_faults;
        std::string version = read_version(request);
        set_common_headers(request, res, server_name_, version);
        account = accounts_.find(request.account);
        // ACCOUNT-secondary: the account's secondary (read-access geo-replicated) endpoint, which
        // the emulator serves from the same data, replicated at once.
        constexpr std::string_view kSecondary = "-secondary";
        if (!account && request.account.size() > kSecondary.size() && request.account.ends_with(kSecondary)) {
            account = accounts_.find(request.account.substr(0, request.account.size() - kSecondary.size()));
            if (account) {
                request.account = account->name;
                request.secondary = true;
            }
        }
        if (!account) {
            fail(404, "ResourceNotFound",
                 "The specified account '" + request.account + "' does not exist in the emulator.");
        }
        if (request.method == "OPTIONS" && settings_) {
            // A preflight: the browser asks before it sends; no credentials, the rules decide.
            answer_preflight(request, res, settings_->cors_rules(account->name, service_));
            return;
        }
        Operation op = resolve_(request);
        // A batch's part carries no body: an operation that takes one is no part of a batch.
        if (request.batch_part && op.streams_body) {
            fail(400, "InvalidInput", "One of the request inputs is not valid.");
        }
        StorageCall call{request, res, *account, {}, nullptr};
        // Who sent it is settled before its body is read: nothing of a refused request is stored.
        authenticate(call, op);
        take_body(op, call, reader);
        op.run(call);
    } catch (const StorageError& e) {
        write_error(http, res, e);
    } catch (const std::exception& e) {
        log::error(server_name_ + " " + http.method + " " + http.target + ": " + e.what());
        write_error(http, res, StorageError(500, "InternalError",
                                            std::string("The server encountered an internal error: ") + e.what()));
    }
    // The answer's CORS headers, errors included (once the account is known: a request refused
    // before that, for its target or version, has none); not a preflight's, which has its own.
    if (settings_ && parsed && account && parsed->method != "OPTIONS" && parsed->has_header("Origin")) {
        try {
            add_cors_headers(*parsed, res, settings_->cors_rules(account->name, service_));
        } catch (const std::exception& e) {
            log::error(server_name_ + " CORS headers of " + http.method + " " + http.target + ": " + e.what());
        }
    }
}

}  // namespace bai::storage
