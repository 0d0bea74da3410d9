#include "fake_storage/blob/copy_source.h"

#include "fake_storage/blob/blob_versions.h"

#include "common/http/loopback.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "fake_storage/auth/sas.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

[[noreturn]] void cannot_verify(int status, const std::string& message) {
    fail(status, "CannotVerifyCopySource", message);
}

// Whether a URL's host names this emulator as the request reached it (its Host header), a loopback
// name for the same port included.
bool names_this_server(const std::string& host, const std::string& own_host) {
    if (own_host.empty() || text::iequals(host, own_host)) return true;
    auto [name, port] = host_and_port(text::lower(host));
    auto [own_name, own_port] = host_and_port(text::lower(own_host));
    return port == own_port && http::is_loopback_host(name) && http::is_loopback_host(own_name);
}

}  // namespace

std::pair<std::string, std::string> host_and_port(std::string_view host) {
    size_t colon = host.rfind(':');
    std::string name(host);
    std::string port;
    if (colon != std::string_view::npos && host.find(']', colon) == std::string_view::npos) {
        name = host.substr(0, colon);
        port = host.substr(colon + 1);
    }
    if (name.size() >= 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
    return {name, port};
}

std::string url_host(const std::string& url) {
    const size_t scheme = url.find("://");
    if (scheme == std::string::npos) return {};
    const size_t slash = url.find('/', scheme + 3);
    return url.substr(scheme + 3, slash == std::string::npos ? std::string::npos : slash - scheme - 3);
}

bool blob_container_is_public(BlobStore& blobs, const std::string& account, const std::string& container) {
    try {
        return !blobs.get_container(account, container).public_access.empty();
    } catch (const StorageError&) {
        return false;
    }
}

std::optional<StoredPolicy> blob_container_policy(BlobStore& blobs, const std::string& account,
                                                  const std::string& container, const std::string& id) {
    try {
        for (const SignedIdentifier& i : blobs.get_container(account, container).identifiers) {
            if (i.id == id) return StoredPolicy{i.start, i.expiry, i.permission};
        }
    } catch (const StorageError&) {
    }
    return std::nullopt;
}

CopySource parse_copy_source(const std::string& url, const std::string& own_host, const std::string& header,
                             const std::string& cloud_suffix) {
    auto bad = [&] { invalid_header(header, url); };
    size_t scheme = url.find("://");
    if (scheme == std::string::npos) bad();
    std::string rest = url.substr(scheme + 3);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) bad();
    std::string host = rest.substr(0, slash);
    std::string target = rest.substr(slash);
    size_t question = target.find('?');
    CopySource s;
    s.https = text::iequals(url.substr(0, scheme), "https");
    if (question != std::string::npos) s.query = target.substr(question + 1);
    std::string path = target.substr(0, question);
    std::vector<std::string> parts;
    size_t start = 1;
    const bool cloud_host = host.size() > cloud_suffix.size() && host.ends_with(cloud_suffix);
    // Another server's URL: the emulator reaches none (loopback only), so the source is not found.
    if (!cloud_host && !names_this_server(host, own_host)) {
        cannot_verify(404, "The specified resource does not exist.");
    }
    size_t limit = cloud_host ? 2 : 3;
    while (parts.size() + 1 < limit) {
        size_t next = path.find('/', start);
        if (next == std::string::npos) bad();
        parts.push_back(path.substr(start, next - start));
        start = next + 1;
    }
    parts.push_back(path.substr(start));
    if (limit == 2) parts.insert(parts.begin(), host.substr(0, host.size() - cloud_suffix.size()));
    // ACCOUNT-secondary names the account's secondary endpoint (an account name has no '-').
    const std::string secondary = "-secondary";
    if (parts[0].size() > secondary.size() && parts[0].ends_with(secondary)) {
        parts[0].resize(parts[0].size() - secondary.size());
    }
    auto account = percent_decode(parts[0], false);
    auto container = percent_decode(parts[1], false);
    auto name = percent_decode(parts[2], false);
    if (!account || !container || !name || name->empty()) bad();
    // The store keeps a deleted container or share under "NAME~VERSION", which no valid name
    // spells: such a source is not found, as a read of it by its own URL is refused.
    if (!is_valid_container_name(*container) && !is_valid_share_name(*container)) {
        cannot_verify(404, "The specified resource does not exist.");
    }
    s.account = *account;
    s.container = *container;
    s.name = *name;
    for (const std::string& pair : text::split_list(s.query, '&')) {
        if (pair.starts_with("snapshot=")) {
            auto snapshot = percent_decode(std::string_view(pair).substr(9), true);
            if (!snapshot) bad();
            s.snapshot = *snapshot;
        } else if (pair.starts_with("versionid=")) {  // a version of the blob: the store's key for it
            auto version = percent_decode(std::string_view(pair).substr(10), true);
            std::optional<std::string> id = version ? parse_version_id(*version) : std::nullopt;
            if (!id) bad();
            s.snapshot = version_key(*id);
        }
    }
    return s;
}

void authorize_copy_source(const CopySource& source, const StorageCall& call, AccountRegistry& accounts,
                           const PublicContainer& is_public, bool key_covers_own_account,
                           const PolicyLookup& policies, SasService service) {
    std::optional<Account> owner = accounts.find(source.account);
    if (!owner) cannot_verify(404, "The specified resource does not exist.");
    // The source URL read as a request of its own: its query carries the source's SAS, if any.
    httplib::Request http;
    http.method = "GET";
    http.target = "/" + source.account + "/" + source.container + "/x" + (source.query.empty() ? "" : "?" + source.query);
    http.remote_addr = call.request.http->remote_addr;
    StorageRequest source_request;
    try {
        source_request = parse_path_style_request(http);
    } catch (const StorageError& e) {
        cannot_verify(e.status(), e.what());
    }
    source_request.container = source.container;
    source_request.name = source.name;
    if (has_sas(source_request)) {
        SasRule read{ResourceLevel::object, "r", "r", ServiceSasScope::container_or_object, false};
        try {
            verify_sas(source_request, *owner, {service, source.container, source.name, read}, time::now(),
                       source.https, policies);
        } catch (const StorageError& e) {
            cannot_verify(e.status(), e.what());
        }
        return;
    }
    // Without a SAS of its own: the key of its account (Copy Blob only), or a public container; a
    // private source is then not found, as an anonymous read of it is not.
    if (key_covers_own_account && call.authorization == Authorization::shared_key &&
        source.account == call.account.name) {
        return;
    }
    if (!is_public(source.account, source.container)) cannot_verify(404, "The specified resource does not exist.");
}

}  // namespace bai::storage
