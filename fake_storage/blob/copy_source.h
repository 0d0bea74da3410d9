// The source of Copy Blob (x-ms-copy-source): where it is, and whether the caller may read it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

struct CopySource {
    std::string account;
    std::string container;
    std::string name;
    std::string query;  // as sent, still percent-encoded: a SAS for the source, if any
    std::string snapshot;  // ?snapshot=TIME: a snapshot of the blob is the source; ?versionid=ID: a version (its key)
    bool https = false;    // the URL's scheme: a SAS of spr=https reads an https URL only
};

// This emulator's path-style URL, or the cloud's https://ACCOUNT.blob.core.windows.net/C/B mapped
// to the local account. 400 InvalidHeaderValue naming x-ms-copy-source when it is neither.
// `own_host`: the request's Host header; a URL of another host (not a loopback name of the same
// port) is 404 CannotVerifyCopySource: the emulator reaches no other server.
// `header` is the header named in that error; `cloud_suffix` the cloud's host names of the service
// (Rename File's source is a URL of the File service, parsed the same way).
CopySource parse_copy_source(const std::string& url, const std::string& own_host,
                             const std::string& header = "x-ms-copy-source",
                             const std::string& cloud_suffix = ".blob.core.windows.net");

class BlobStore;

// host[:port] split (an IPv6 address without its brackets); the port "" when not given.
std::pair<std::string, std::string> host_and_port(std::string_view host);
// A URL's host[:port] (its authority); "" when it has no scheme.
std::string url_host(const std::string& url);

// What authorizes reading a container's blobs besides the account's key, for the Blob service's
// own requests and for a copy's source alike: whether it is public (anonymous read of its blobs),
// and its stored access policy `id`. False and none for a container that does not exist.
bool blob_container_is_public(BlobStore& blobs, const std::string& account, const std::string& container);
std::optional<StoredPolicy> blob_container_policy(BlobStore& blobs, const std::string& account,
                                                  const std::string& container, const std::string& id);

// Whether a container of an account lets anonymous clients read its blobs.
using PublicContainer = std::function<bool(const std::string& account, const std::string& container)>;

// The request's own authorization covers the destination only. A source URL with a SAS is read
// with that SAS, which must allow reading it. Without one, Copy Blob reads a source of the account
// whose key signed the request with that key (`key_covers_own_account`); the From URL operations
// (Put Block From URL, Put Blob From URL, Copy Blob From URL) never do: the service asks them for
// the source's own SAS even within one account (the Azure SDK maintainers confirmed it when users
// reported it, for Put Blob From URL and for a synchronous copy). Otherwise the source must be in a public
// container; a SAS that authorized the destination never covers the source (it would read what
// its own letters do not allow). A source that cannot be read this way is refused as the service
// refuses it: CannotVerifyCopySource, 403 for a SAS that does not allow it, 404 for a private
// source without one (as the cloud answers a synchronous copy of one) or an account that does
// not exist.
// `service`: the source's service (Copy File's source is a file, read with a File SAS).
void authorize_copy_source(const CopySource& source, const StorageCall& call, AccountRegistry& accounts,
                           const PublicContainer& is_public, bool key_covers_own_account,
                           const PolicyLookup& policies = {}, SasService service = SasService::blob);

}  // namespace bai::storage
