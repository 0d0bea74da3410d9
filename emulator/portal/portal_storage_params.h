// What the storage browser's reads and changes share: their query parameters (bounded), the
// account they name, a store's refusal as the portal's answer, and a blob's or file's download
// link (the Blob or File endpoint's URL with a read-only SAS valid for an hour).
#pragma once

#include <httplib.h>

#include <initializer_list>
#include <optional>
#include <string>

#include "common/endpoints/endpoints_file.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/engine/storage_error.h"
#include "emulator/portal/portal_json.h"

namespace bai::portal {

std::string param(const httplib::Request& req, const char* name);
// The account named by ?account=, or nullopt with 404 AccountNotFound answered.
std::optional<storage::Account> account_of(const storage::AccountRegistry& accounts, const httplib::Request& req,
                                           httplib::Response& res);
// False, with 400 InvalidParameter answered, when one of the parameters is over 1,024 characters.
bool bounded(const httplib::Request& req, httplib::Response& res, std::initializer_list<const char*> names);
std::string download_url(const endpoints::Endpoints& endpoints, const storage::Account& account, bool blob,
                         const std::string& container, const std::string& path);

// Runs `operation`; a store's refusal is answered with its status and code (a bad name 400, a
// missing container 404, a leased blob 412).
template <typename Operation>
void answered(httplib::Response& res, Operation operation) {
    try {
        operation();
    } catch (const storage::StorageError& e) {
        send_portal_error(res, e.status(), e.code(), e.what());
    }
}

}  // namespace bai::portal
