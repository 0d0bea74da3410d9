// A Blob or File REST request as the services see it: path-style target split into account,
// container (or share) and the rest, query parameters decoded, headers.
#pragma once

#include "common/text/percent_encoding.h"

#include <httplib.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bai::storage {

struct StorageRequest {
    std::string method;
    std::string raw_path;  // as sent, still percent-encoded: "/acct/c/a%20b"
    std::string account;
    std::string container;  // or share; empty at service level
    std::string name;       // blob name or file path, decoded; empty at container level
    // Query parameters by lower-cased name; values decoded, in the order sent.
    std::map<std::string, std::vector<std::string>> query;
    const httplib::Request* http = nullptr;
    bool secondary = false;  // addressed to ACCOUNT-secondary (account is the account's own name)
    // One request of a Blob batch: its path was sent without the account, and its client signed it so.
    bool batch_part = false;
    // Addressed to ACCOUNT.blob|file.core.windows.net through the proxy front door: the account
    // came from the host name, and raw_path (which starts with it, as for a path-style request)
    // was sent, and signed, without it.
    bool host_style = false;

    std::optional<std::string> param(const std::string& lower_name) const;
    bool has_param(const std::string& lower_name) const { return query.contains(lower_name); }
    std::string header(const std::string& name) const;  // "" when absent
    bool has_header(const std::string& name) const;
};

// Splits `target` ("/acct/c/blob?x=1"; "/c/blob?x=1" with the account from http::proxied_host()
// when the request came through the proxy front door). Throws StorageError 400 InvalidUri for targets that do
// not decode (bad percent escapes, NUL, invalid UTF-8).
StorageRequest parse_storage_request(const httplib::Request& http);
// The same for a target that is path-style whoever asks (a copy's source URL, read as a request
// of its own while a host-style request is being served).
StorageRequest parse_path_style_request(const httplib::Request& http);

using text::percent_decode;

}  // namespace bai::storage
