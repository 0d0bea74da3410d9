#include "fake_storage/blob/blob_service.h"
#include "fake_storage/http/change_feed.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/crypto/base64.h"
#include "common/crypto/crc64.h"
#include "common/crypto/digest.h"
#include "common/crypto/random_id.h"
#include "common/text/ascii.h"
#include "fake_storage/blob/blob_batch.h"
#include "fake_storage/blob/blob_versions.h"
#include "fake_storage/blob/blob_xml.h"
#include "fake_storage/http/lease_headers.h"
#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/block_list_xml.h"
#include "fake_storage/http/container_acl_xml.h"
#include "fake_storage/http/content_response.h"
#include "fake_storage/http/service_properties_xml.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {
namespace {

using namespace std::placeholders;

void check_container_name(const std::string& name) {
    if (!is_valid_container_name(name)) {
        fail(400, "InvalidResourceName", "The specifed resource name contains invalid characters.");
    }
}

void check_blob_name(const std::string& name) {
    if (!is_valid_blob_name(name)) {
        fail(400, "InvalidResourceName", name.size() > 1024
                                             ? "The specified resource name length is not within the permissible limits."
                                             : "The specifed resource name contains invalid characters.");
    }
}

std::string public_access_header(const StorageRequest& r) {
    if (!r.has_header("x-ms-blob-public-access")) return "";
    std::string value = r.header("x-ms-blob-public-access");
    if (value != "blob" && value != "container") invalid_header("x-ms-blob-public-access", value);
    return value;
}

// Put Blob takes the content headers with or without the x-ms-blob- prefix; the other
// operations only with it.
ContentSettings content_settings(const StorageRequest& r, bool standard_headers_too) {
    auto pick = [&](const char* ms, const char* standard) {
        if (r.has_header(ms)) return r.header(ms);
        return standard_headers_too && standard != nullptr ? r.header(standard) : std::string();
    };
    ContentSettings c;
    c.content_type = pick("x-ms-blob-content-type", "Content-Type");
    c.content_encoding = pick("x-ms-blob-content-encoding", "Content-Encoding");
    c.content_language = pick("x-ms-blob-content-language", "Content-Language");
    c.cache_control = pick("x-ms-blob-cache-control", "Cache-Control");
    c.content_disposition = pick("x-ms-blob-content-disposition", nullptr);
    // Stored as given (Set Blob Properties and Put Block List take any value); Put Blob checks it.
    c.content_md5 = pick("x-ms-blob-content-md5", nullptr);
    return c;
}

// sealing: x-ms-version 2019-12-12 or later, which brought sealed append blobs (older versions
// are answered without x-ms-blob-sealed).
}  // namespace

void answer_one_checksum(const StorageRequest& r, httplib::Response& response) {
    if (r.has_header("Content-MD5")) response.headers.erase("x-ms-content-crc64");
}

namespace {

void write_blob_headers(httplib::Response& res, const BlobInfo& b, time::TimePoint now, bool sealing) {
    set_version_headers(res, b.etag, b.last_modified);
    res.set_header("x-ms-creation-time", time::format_rfc1123(b.created));
    res.set_header("x-ms-blob-type", blob_type_name(b.type));
    if (b.type == BlobType::append) {
        res.set_header("x-ms-blob-committed-block-count", std::to_string(b.committed_block_count));
        if (sealing) res.set_header("x-ms-blob-sealed", b.sealed ? "true" : "false");
    }
    if (b.type == BlobType::page) res.set_header("x-ms-blob-sequence-number", std::to_string(b.sequence_number));
    // A snapshot is never leased, and its reads say nothing of leases (recorded).
    const bool snapshot = !b.snapshot.empty() && b.snapshot.front() != '@';
    if (!snapshot) write_lease_headers(res, b.lease, now);
    res.set_header("x-ms-server-encrypted", "true");
    if (!b.tags.empty()) res.set_header("x-ms-tag-count", std::to_string(b.tags.size()));
    if (!b.copy.empty()) {
        res.set_header("x-ms-copy-id", b.copy.id);
        res.set_header("x-ms-copy-source", b.copy.source);
        res.set_header("x-ms-copy-status", b.copy.status);
        res.set_header("x-ms-copy-progress", b.copy.progress);
        res.set_header("x-ms-copy-completion-time", time::format_rfc1123(b.copy.completed));
        if (b.copy.incremental) {
            res.set_header("x-ms-incremental-copy", "true");
            res.set_header("x-ms-copy-destination-snapshot", b.copy.destination_snapshot);
        }
    }
    write_metadata(res, b.metadata);
}

// Blob index tags from x-ms-tags (none when absent).
Tags request_tags(const StorageRequest& r) {
    return r.has_header("x-ms-tags") ? parse_tags_header(r.header("x-ms-tags")) : Tags{};
}

// x-ms-access-tier of a write: one of the block blob tiers, as the service spells it.
std::string request_tier(const StorageRequest& r) {
    if (!r.has_header("x-ms-access-tier")) return "";
    const std::string tier = r.header("x-ms-access-tier");
    for (const char* known : {"Hot", "Cool", "Cold", "Archive"}) {
        if (text::iequals(tier, known)) return known;
    }
    invalid_header("x-ms-access-tier", tier);
}

}  // namespace

BlobService::BlobService(AccountRegistry& accounts, BlobStore& store, ContentFiles& files, ServiceSettings& settings)
    : accounts_(accounts),
      store_(store),
      files_(files),
      settings_(settings),
      journal_(store.changes()),
      endpoint_("batchai-emulator-blob", accounts, files,
                [this](StorageRequest& r) {
                    // The service stores a blob name's backslashes as slashes.
                    std::replace(r.name.begin(), r.name.end(), '\\', '/');
                    return resolve(r);
                }) {
    endpoint_.set_settings(&settings_, "blob");
    endpoint_.set_policy_lookup(
        [this](const std::string& account, const std::string& container, const std::string& id) {
            return stored_policy(account, container, id);
        });
}

bool BlobService::container_is_public(const StorageRequest& r, bool listing) {
    try {
        std::string access = store_.get_container(r.account, r.container).public_access;
        return listing ? access == "container" : !access.empty();
    } catch (const StorageError&) {
        return false;
    }
}

std::optional<StoredPolicy> BlobService::stored_policy(const std::string& account, const std::string& container,
                                                      const std::string& id) {
    return blob_container_policy(store_, account, container, id);
}

bool BlobService::container_is_public(const std::string& account, const std::string& container) {
    return blob_container_is_public(store_, account, container);
}

Operation BlobService::resolve(const StorageRequest& r) {
    if (r.container.empty()) return service_operation(r);
    check_container_name(r.container);
    if (is_account_information(r)) return account_information(r);
    if (r.name.empty()) return container_operation(r);
    check_blob_name(r.name);
    return blob_operation(r);
}

Operation BlobService::service_operation(const StorageRequest& r) {
    auto comp = r.param("comp").value_or("");
    auto restype = r.param("restype").value_or("");
    SasNeed need{SasService::blob, "", "", account_only(ResourceLevel::service, "l")};
    if (r.method == "GET" && comp == "list") {
        return {"ListContainers", need, false, false, nullptr,
                std::bind(&BlobService::list_containers, this, _1)};
    }
    if (r.method == "POST" && comp == "batch") {
        // The batch only carries its requests: each is authorized on its own.
        need.rule = {std::nullopt, kAnyPermission, "", ServiceSasScope::none};
        return {"SubmitBatch", need, false, false, nullptr, std::bind(&BlobService::submit_batch, this, _1)};
    }
    if (r.method == "GET" && comp == "blobs") {
        need.rule = account_only(ResourceLevel::service, "f");
        return {"FindBlobsByTags", need, false, false, nullptr,
                std::bind(&BlobService::find_blobs_by_tags, this, _1)};
    }
    if (restype == "service" && comp == "properties" && (r.method == "GET" || r.method == "PUT")) {
        const bool get = r.method == "GET";
        need.rule = account_only(ResourceLevel::service, get ? "r" : "w");
        return {get ? "GetBlobServiceProperties" : "SetBlobServiceProperties", need, false, false, nullptr,
                std::bind(get ? &BlobService::get_service_properties : &BlobService::set_service_properties, this, _1)};
    }
    if (r.method == "POST" && restype == "service" && comp == "userdelegationkey") {
        Operation o{"GetUserDelegationKey", need, false, false, nullptr,
                    std::bind(&BlobService::get_user_delegation_key, this, _1)};
        o.bearer_only = true;
        return o;
    }
    if (r.method == "GET" && restype == "service" && comp == "stats") {
        need.rule = account_only(ResourceLevel::service, "r");
        return {"GetBlobServiceStats", need, false, false, nullptr,
                std::bind(&BlobService::get_service_stats, this, _1)};
    }
    if (is_account_information(r)) return account_information(r);
    unsupported(r);
}

bool BlobService::is_account_information(const StorageRequest& r) {
    return (r.method == "GET" || r.method == "HEAD") && r.param("restype").value_or("") == "account" &&
           r.param("comp").value_or("") == "properties";
}

// Get Account Information, on the account, a container or a blob URL alike (the container or blob
// need not exist: recorded on a container named "missing"): any signed resource type and any
// permission, and a container's or blob's own SAS. The emulator's accounts are read-access
// geo-redundant: they have a secondary endpoint (ACCOUNT-secondary).
Operation BlobService::account_information(const StorageRequest& r) {
    SasNeed need{SasService::blob, r.container, r.name,
                 {std::nullopt, kAnyPermission, r.container.empty() ? "" : kAnyPermission,
                  r.container.empty() ? ServiceSasScope::none : ServiceSasScope::container_or_object}};
    return {"GetAccountInformation", need, false, false, nullptr, [](StorageCall& call) {
                call.response.set_header("x-ms-sku-name", "Standard_RAGRS");
                call.response.set_header("x-ms-account-kind", "StorageV2");
                // The header of versions 2019-07-07 on, which brought it (none at 2019-02-02: recorded).
                if (read_version(call.request) >= "2019-07-07") call.response.set_header("x-ms-is-hns-enabled", "false");
            }};
}

Operation BlobService::container_operation(const StorageRequest& r) {
    auto comp = r.param("comp").value_or("");
    auto restype = r.param("restype").value_or("");
    const std::string& m = r.method;
    auto op = [&](const char* name, SasRule rule, void (BlobService::*f)(StorageCall&)) {
        return Operation{name, {SasService::blob, r.container, "", std::move(rule)}, false, false, nullptr,
                         std::bind(f, this, _1)};
    };
    // The container itself: an account SAS only; its ACL: no SAS at all (the account owner only).
    const SasRule no_sas{ResourceLevel::container, "", "", ServiceSasScope::none};
    if (restype == "container") {
        if (m == "PUT" && comp.empty()) {
            return op("CreateContainer", account_only(ResourceLevel::container, "cw"), &BlobService::create_container);
        }
        if ((m == "GET" || m == "HEAD") && (comp.empty() || comp == "metadata")) {
            Operation o = op("GetContainerProperties", account_only(ResourceLevel::container, "r"),
                             &BlobService::container_properties);
            o.is_public = [this](const StorageRequest& req) { return container_is_public(req, true); };
            return o;
        }
        if (m == "DELETE" && comp.empty()) {
            return op("DeleteContainer", account_only(ResourceLevel::container, "d"), &BlobService::delete_container);
        }
        // Restore Container makes the container again: the letters of Create Container (the
        // service's pages name an account SAS, and no letter).
        if (m == "PUT" && comp == "undelete") {
            return op("RestoreContainer", account_only(ResourceLevel::container, "cw"), &BlobService::restore_container);
        }
        if (m == "PUT" && comp == "metadata") {
            return op("SetContainerMetadata", account_only(ResourceLevel::container, "w"),
                      &BlobService::set_container_metadata);
        }
        if ((m == "GET" || m == "HEAD") && comp == "acl") return op("GetContainerACL", no_sas, &BlobService::get_container_acl);
        if (m == "PUT" && comp == "acl") return op("SetContainerACL", no_sas, &BlobService::set_container_acl);
        if (m == "PUT" && comp == "lease") {
            return op("LeaseContainer", {ResourceLevel::container, "w", "w", ServiceSasScope::container},
                      &BlobService::lease_container);
        }
        if (m == "POST" && comp == "batch") {
            return op("SubmitBatch", {std::nullopt, kAnyPermission, kAnyPermission, ServiceSasScope::container},
                      &BlobService::submit_batch);
        }
        if (m == "GET" && comp == "blobs") {
            return op("FindBlobsByTags", {ResourceLevel::container, "f", "f", ServiceSasScope::container},
                      &BlobService::find_blobs_by_tags);
        }
        if (m == "GET" && comp == kChangesComp) {
            return op("ListChanges", {ResourceLevel::container, "l", "l", ServiceSasScope::container},
                      &BlobService::list_changes);
        }
        if (m == "GET" && comp == "list") {
            Operation o = op("ListBlobs", {ResourceLevel::container, "l", "l", ServiceSasScope::container},
                             &BlobService::list_blobs);
            o.is_public = [this](const StorageRequest& req) { return container_is_public(req, true); };
            return o;
        }
    }
    // A blob in the $root container addressed without the container: /account/blob.
    unsupported(r);
}

Operation BlobService::blob_operation(const StorageRequest& r) {
    auto comp = r.param("comp").value_or("");
    const std::string& m = r.method;
    // One blob: the same letters for an account SAS and a container or blob SAS.
    auto op = [&](const char* name, const char* letters, void (BlobService::*f)(StorageCall&),
                  bool create_new_only = false) {
        SasRule rule{ResourceLevel::object, letters, letters, ServiceSasScope::container_or_object, create_new_only};
        return Operation{name, {SasService::blob, r.container, r.name, std::move(rule)}, false, false, nullptr,
                         std::bind(f, this, _1)};
    };
    if (m == "PUT" && comp.empty()) {
        // 'c' writes a new blob or copies to a new blob; replacing one takes 'w'.
        // Put Blob From URL names the blob type; Copy Blob From URL asks for a synchronous copy.
        if (r.has_header("x-ms-copy-source") && r.has_header("x-ms-blob-type")) {
            return op("PutBlobFromURL", "cw", &BlobService::put_blob_from_url, true);
        }
        if (r.has_header("x-ms-copy-source") && text::iequals(r.header("x-ms-requires-sync"), "true")) {
            return op("CopyBlobFromURL", "cw", &BlobService::copy_blob_from_url, true);
        }
        if (r.has_header("x-ms-copy-source")) return op("CopyBlob", "cw", &BlobService::copy_blob, true);
        Operation o = op("PutBlob", "cw", &BlobService::put_blob, true);
        o.streams_body = true;
        o.digest_body = true;
        // A block blob's Put Blob answers the body's CRC64, asked or not.
        o.crc64_body = r.has_header("x-ms-content-crc64") || text::iequals(r.header("x-ms-blob-type"), "BlockBlob");
        o.max_body = kMaxPutBlobSize;
        return o;
    }
    if (m == "PUT" && comp == "appendblock" && r.has_header("x-ms-copy-source")) {
        return op("AppendBlockFromURL", "aw", &BlobService::append_block_from_url);
    }
    if (m == "PUT" && comp == "page" && r.has_header("x-ms-copy-source")) {
        return op("PutPageFromURL", "w", &BlobService::put_page_from_url);
    }
    if (m == "PUT" && comp == "incrementalcopy") {
        return op("IncrementalCopyBlob", "cw", &BlobService::incremental_copy_blob, true);
    }
    if (m == "PUT" && comp == "appendblock") {
        Operation o = op("AppendBlock", "aw", &BlobService::append_block);
        o.streams_body = true;
        o.digest_body = r.has_header("Content-MD5");
        o.crc64_body = true;
        o.max_body = kMaxAppendBlockSize;
        return o;
    }
    if (m == "PUT" && comp == "seal") return op("SealBlob", "w", &BlobService::seal_blob);
    if (m == "PUT" && comp == "page") {
        Operation o = op("PutPage", "w", &BlobService::put_page);
        o.streams_body = true;
        o.digest_body = r.has_header("Content-MD5");
        o.crc64_body = true;
        o.max_body = kMaxPutPage;
        return o;
    }
    if (m == "GET" && comp == "pagelist") return op("GetPageRanges", "r", &BlobService::get_page_ranges);
    if (m == "PUT" && comp == "snapshot") return op("SnapshotBlob", "cw", &BlobService::snapshot_blob);
    if (m == "GET" && comp == "tags") return op("GetBlobTags", "t", &BlobService::get_blob_tags);
    if (m == "PUT" && comp == "tags") return op("SetBlobTags", "t", &BlobService::set_blob_tags);
    if (m == "PUT" && comp == "tier") return op("SetBlobTier", "w", &BlobService::set_blob_tier);
    // Blocks and block lists are writes ('w'), whether or not the blob exists yet.
    if (m == "PUT" && comp == "block" && r.has_header("x-ms-copy-source")) {
        return op("PutBlockFromURL", "w", &BlobService::put_block_from_url);
    }
    if (m == "PUT" && comp == "block") {
        Operation o = op("PutBlock", "w", &BlobService::put_block);
        o.streams_body = true;
        o.max_body = kMaxBlockSize;
        o.digest_body = r.has_header("Content-MD5");
        o.crc64_body = true;
        return o;
    }
    if (m == "PUT" && comp == "blocklist") return op("PutBlockList", "w", &BlobService::put_block_list);
    if (m == "GET" && comp == "blocklist") return op("GetBlockList", "r", &BlobService::get_block_list);
    if ((m == "GET" || m == "HEAD") && comp.empty()) {
        Operation o = op(m == "GET" ? "GetBlob" : "GetBlobProperties", "r", &BlobService::get_blob);
        o.is_public = [this](const StorageRequest& req) { return container_is_public(req, false); };
        return o;
    }
    if (m == "PUT" && comp == "properties" &&
        (r.has_header("x-ms-blob-content-length") || r.has_header("x-ms-sequence-number-action"))) {
        return op("SetBlobProperties", "w", &BlobService::set_page_blob_properties);
    }
    if (m == "PUT" && comp == "properties") return op("SetBlobProperties", "w", &BlobService::set_blob_properties);
    if (m == "PUT" && comp == "metadata") return op("SetBlobMetadata", "w", &BlobService::set_blob_metadata);
    if ((m == "GET" || m == "HEAD") && comp == "metadata") {
        return op("GetBlobMetadata", "r", &BlobService::get_blob_metadata);
    }
    // Deleting a version takes 'x' (delete version), the blob itself 'd'.
    if (m == "DELETE" && comp.empty()) return op("DeleteBlob", names_version(r) ? "x" : "d", &BlobService::delete_blob);
    if (m == "PUT" && comp == "lease") return op("LeaseBlob", "w", &BlobService::lease_blob);
    // Restoring a deleted blob writes it back ('w', as Azurite asks; the service's tables name
    // no letter for it).
    if (m == "PUT" && comp == "undelete") return op("UndeleteBlob", "w", &BlobService::undelete_blob);
    unsupported(r);
}

void BlobService::list_containers(StorageCall& call) {
    ListOptions o = list_options(call.request);
    o.max_results_asked = call.request.param("maxresults").has_value();
    o.deleted = includes(call.request, "deleted");
    const time::TimePoint now = store_.clock_now();
    const int retention_days = store_.container_retention_days(call.account.name);
    if (o.deleted) store_.purge_deleted_containers(call.account.name, now - std::chrono::hours(24) * retention_days);
    ContainerListPage page = store_.list_containers(call.account.name, o);
    call.response.set_content(
        list_containers_xml(service_endpoint(call), o, page, includes(call.request, "metadata"), now, retention_days),
        "application/xml");
}

void BlobService::submit_batch(StorageCall& call) {
    answer_batch(call, call.request.container,
                 [this](const httplib::Request& part, httplib::Response& res) { endpoint_.serve_part(part, res); });
}

void BlobService::get_service_properties(StorageCall& call) {
    nlohmann::json properties = settings_.get(call.account.name, "blob", default_blob_service_properties());
    call.response.set_content(blob_service_properties_xml(properties), "application/xml");
}

void BlobService::set_service_properties(StorageCall& call) {
    nlohmann::json update = parse_blob_service_properties(call.body);
    settings_.update(call.account.name, "blob", default_blob_service_properties(),
                     [&](nlohmann::json stored) { return merge_service_properties(std::move(stored), update); });
    call.response.status = 202;
}

// Replication statistics are the secondary endpoint's alone; the emulator's secondary is the
// primary's own data, so it is live and in sync as of now.
void BlobService::get_service_stats(StorageCall& call) {
    if (!call.request.secondary) {
        fail(400, "InvalidQueryParameterValue",
             "Value for one of the query parameters specified in the request URI is invalid.\n"
             "QueryParameterName:comp\nQueryParameterValue:stats\n"
             "Reason:Replication statistics are served by the account's secondary endpoint only.");
    }
    call.response.set_content("<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication>"
                              "<Status>live</Status><LastSyncTime>" +
                                  time::format_rfc1123(store_.clock_now()) +
                                  "</LastSyncTime></GeoReplication></StorageServiceStats>",
                              "application/xml");
}

void BlobService::create_container(StorageCall& call) {
    ContainerInfo c = store_.create_container(call.account.name, call.request.container,
                                              read_metadata(call.request),
                                              public_access_header(call.request));
    call.response.status = 201;
    set_version_headers(call.response, c.etag, c.last_modified);
}

void BlobService::container_properties(StorageCall& call) {
    ContainerInfo c = store_.get_container(call.account.name, call.request.container);
    check_lease_if_named(c.lease, read_conditions(call.request).lease_id, store_.clock_now(), LeaseTarget::container);
    set_version_headers(call.response, c.etag, c.last_modified);
    write_metadata(call.response, c.metadata);
    write_lease_headers(call.response, c.lease, store_.clock_now());
    call.response.set_header("x-ms-has-immutability-policy", "false");
    call.response.set_header("x-ms-has-legal-hold", "false");
    // Every container is encrypted with the account's key (no encryption scopes here).
    call.response.set_header("x-ms-default-encryption-scope", "$account-encryption-key");
    call.response.set_header("x-ms-deny-encryption-scope-override", "false");
    if (!c.public_access.empty()) call.response.set_header("x-ms-blob-public-access", c.public_access);
}

void BlobService::delete_container(StorageCall& call) {
    store_.delete_container(call.account.name, call.request.container, read_conditions(call.request));
    call.response.status = 202;
}

// Restore Container (PUT ?restype=container&comp=undelete): the deleted container that
// x-ms-deleted-container-name and -version name comes back as the URL's container.
void BlobService::restore_container(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-deleted-container-name")) missing_header("x-ms-deleted-container-name");
    if (!r.has_header("x-ms-deleted-container-version")) missing_header("x-ms-deleted-container-version");
    const std::string name = r.header("x-ms-deleted-container-name");
    const std::string version = r.header("x-ms-deleted-container-version");
    if (!is_valid_container_name(name)) invalid_header("x-ms-deleted-container-name", name);
    if (!deleted_share_time(version)) invalid_header("x-ms-deleted-container-version", version);
    std::string upper = version;  // as List Containers names it
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const time::TimePoint kept_since =
        store_.clock_now() - std::chrono::hours(24) * store_.container_retention_days(call.account.name);
    ContainerInfo c = store_.restore_container(call.account.name, r.container, name, upper, kept_since);
    call.response.status = 201;
    set_version_headers(call.response, c.etag, c.last_modified);
}

void BlobService::set_container_metadata(StorageCall& call) {
    ContainerInfo c = store_.set_container_metadata(call.account.name, call.request.container,
                                                    read_metadata(call.request),
                                                    read_conditions(call.request));
    set_version_headers(call.response, c.etag, c.last_modified);
}

void BlobService::get_container_acl(StorageCall& call) {
    ContainerInfo c = store_.get_container(call.account.name, call.request.container);
    check_lease_if_named(c.lease, read_conditions(call.request).lease_id, store_.clock_now(), LeaseTarget::container);
    set_version_headers(call.response, c.etag, c.last_modified);
    if (!c.public_access.empty()) call.response.set_header("x-ms-blob-public-access", c.public_access);
    call.response.set_content(signed_identifiers_xml(c.identifiers), "application/xml");
}

void BlobService::set_container_acl(StorageCall& call) {
    ContainerInfo c = store_.set_container_access(call.account.name, call.request.container,
                                                  public_access_header(call.request),
                                                  parse_signed_identifiers(call.body), read_conditions(call.request));
    set_version_headers(call.response, c.etag, c.last_modified);
}

void BlobService::lease_container(StorageCall& call) {
    auto [outcome, c] = store_.lease_container(call.account.name, call.request.container, lease_request(call.request),
                                               read_conditions(call.request));
    write_lease_outcome(call.response, outcome, c.etag, c.last_modified);
}

void BlobService::lease_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    auto [outcome, b] = store_.lease_blob(call.account.name, r.container, r.name, lease_request(r), read_conditions(r));
    write_lease_outcome(call.response, outcome, b.etag, b.last_modified);
}

void BlobService::list_blobs(StorageCall& call) {
    ListOptions o = list_options(call.request);
    o.max_results_asked = call.request.param("maxresults").has_value();
    o.snapshots = includes(call.request, "snapshots");
    o.versions = includes(call.request, "versions");
    o.uncommitted = includes(call.request, "uncommittedblobs");
    o.deleted = includes(call.request, "deleted");
    BlobListPage page = store_.list_blobs(call.account.name, call.request.container, o);
    BlobListIncludes what;
    what.metadata = includes(call.request, "metadata");
    what.tags = includes(call.request, "tags");
    what.copy = includes(call.request, "copy");
    what.version_ids = read_version(call.request) >= "2019-10-10";
    what.or_metadata = read_version(call.request) >= "2019-12-12";
    if (o.deleted) what.retention_days = store_.delete_retention_days(call.account.name);
    what.last_access_time =
        read_version(call.request) >= "2020-02-10" && store_.last_access_tracking(call.account.name);
    call.response.set_content(list_blobs_xml(service_endpoint(call), call.request.container, o, page, what,
                                             store_.clock_now()),
                              "application/xml");
}

void BlobService::put_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-blob-type")) missing_header("x-ms-blob-type");
    const std::string type_name = r.header("x-ms-blob-type");
    std::optional<BlobType> type = blob_type_from_name(type_name);
    if (!type) invalid_header("x-ms-blob-type", type_name);
    BlobTraits traits;
    traits.type = *type;
    if (*type == BlobType::page) {
        auto size = read_uint_header(r, "x-ms-blob-content-length");
        if (!size) missing_header("x-ms-blob-content-length");
        if (*size % kPageSize != 0 || *size > kMaxPageBlobSize) {
            invalid_header("x-ms-blob-content-length", r.header("x-ms-blob-content-length"));
        }
        traits.page_blob_size = *size;
        auto sequence = read_uint_header(r, "x-ms-blob-sequence-number");
        if (sequence && *sequence > static_cast<std::uint64_t>(INT64_MAX)) {
            invalid_header("x-ms-blob-sequence-number", r.header("x-ms-blob-sequence-number"));
        }
        traits.sequence_number = static_cast<std::int64_t>(sequence.value_or(0));
    }
    traits.tags = request_tags(r);
    traits.tier = request_tier(r);
    if (*type != BlobType::block && call.content->size() != 0) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:Content-Length\n"
             "HeaderValue:" + std::to_string(call.content->size()));
    }
    if (*type != BlobType::block && !traits.tier.empty()) invalid_header("x-ms-access-tier", traits.tier);
    std::string digest = call.content->md5();
    // x-ms-blob-content-md5, when sent, is what the body is checked against (it takes precedence
    // over the transactional Content-MD5, as the service does).
    // An append or page blob is created empty: its x-ms-blob-content-md5 is a property to keep.
    if (r.has_header("x-ms-content-crc64")) {
        check_transactional_checksums(r, *call.content, call.response);
    } else if (r.has_header("x-ms-blob-content-md5") && *type == BlobType::block) {
        check_content_md5(r, digest, "x-ms-blob-content-md5");
    } else {
        check_content_md5(r, digest);
    }
    ContentSettings content = content_settings(r, true);
    // Append blobs are created empty: the MD5 is only what the request names.
    if (content.content_md5.empty() && *type == BlobType::block) content.content_md5 = crypto::base64_encode(digest);
    BlobInfo b = store_.put_blob(call.account.name, r.container, r.name, *call.content, content,
                                 read_metadata(r), write_conditions(call), traits);
    call.response.status = 201;
    set_version_headers(call.response, b.etag, b.last_modified);
    answer_version_id(r, call.response, b.version_id);
    if (*type == BlobType::block) {
        call.response.set_header("Content-MD5", content.content_md5);
        call.response.set_header("x-ms-content-crc64", crypto::base64_encode(call.content->crc64()));
    }
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

// Copy Blob (synchronous here, as every copy inside the emulator), Copy Blob From URL
// (x-ms-requires-sync) and Put Blob From URL (x-ms-blob-type): the From URL ones take their
// source's authorization from the source URL only, and Put Blob From URL answers as a Put Blob.
void BlobService::copy_blob(StorageCall& call) { copy_into(call, CopyKind::copy); }
void BlobService::copy_blob_from_url(StorageCall& call) { copy_into(call, CopyKind::copy_from_url); }
void BlobService::put_blob_from_url(StorageCall& call) { copy_into(call, CopyKind::put_from_url); }

void BlobService::copy_into(StorageCall& call, CopyKind kind) {
    const StorageRequest& r = call.request;
    const bool put_from_url = kind == CopyKind::put_from_url;
    const bool from_url = kind != CopyKind::copy;
    if (put_from_url && r.header("x-ms-blob-type") != "BlockBlob") invalid_header("x-ms-blob-type", r.header("x-ms-blob-type"));
    CopySource source = parse_copy_source(r.header("x-ms-copy-source"), r.header("Host"));
    // The destination's own authorization comes first: a SAS that may create but not replace
    // (its 'c' alone) is refused an existing blob before the source is looked at. (The commit
    // checks again, in its transaction.)
    if (write_conditions(call).create_new_only) {
        bool exists = true;
        try {
            store_.get_blob(call.account.name, r.container, r.name);
        } catch (const StorageError& e) {
            if (e.status() != 404) throw;
            exists = false;
        }
        if (exists) fail(403, "UnauthorizedBlobOverwrite", "This request is not authorized to perform blob overwrites.");
    }
    authorize_source(source, call, /*key_covers_own_account=*/!from_url);
    Metadata metadata = read_metadata(r);
    // Put Blob From URL takes its metadata from the request, as Put Blob; a copy the source's
    // unless the request names some.
    BlobStore::CopyRequest copy;
    copy.source_conditions = read_source_conditions(r);
    if (!metadata.empty() || put_from_url) copy.metadata = metadata;
    copy.tags = request_tags(r);
    // The From URL operations may keep the source's tags (x-ms-copy-source-tag-option: COPY).
    const std::string tag_option = r.header("x-ms-copy-source-tag-option");
    if (from_url && text::iequals(tag_option, "COPY")) {
        if (r.has_header("x-ms-tags")) invalid_header("x-ms-tags", r.header("x-ms-tags"));
        copy.source_tags = true;
    } else if (!tag_option.empty() && !text::iequals(tag_option, "REPLACE")) {
        invalid_header("x-ms-copy-source-tag-option", tag_option);
    }
    copy.tier = request_tier(r);
    copy.source_url = r.header("x-ms-copy-source");
    copy.source_snapshot = source.snapshot;
    copy.records_copy = !put_from_url;
    // The From URL operations check the source's bytes against x-ms-source-content-md5 and echo it.
    // Put Blob From URL answers the CRC64 of what it wrote (recorded), read with the MD5.
    std::optional<std::string> source_md5;
    std::pair<std::string, std::string> checksums;
    if (put_from_url || (from_url && r.has_header("x-ms-source-content-md5"))) {
        checksums = checksums_of_blob(source.account, source.container, source.name, source.snapshot);
    }
    if (from_url && r.has_header("x-ms-source-content-md5")) {
        source_md5 = r.header("x-ms-source-content-md5");
        check_source_md5(r, [&] { return checksums.first; });
    }
    BlobInfo b = store_.copy_blob(call.account.name, r.container, r.name, source.account,
                                  source.container, source.name, copy, write_conditions(call));
    set_version_headers(call.response, b.etag, b.last_modified);
    answer_version_id(r, call.response, b.version_id);
    if (put_from_url) {
        call.response.status = 201;
        call.response.set_header("x-ms-content-crc64", crypto::base64_encode(checksums.second));
        call.response.set_header("x-ms-request-server-encrypted", "true");
        return;
    }
    if (source_md5) call.response.set_header("Content-MD5", *source_md5);
    call.response.status = 202;
    call.response.set_header("x-ms-copy-id", b.copy.id);
    call.response.set_header("x-ms-copy-status", "success");
}

void BlobService::put_block(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string block_id = block_id_param(r);
    check_transactional_checksums(r, *call.content, call.response);
    answer_one_checksum(r, call.response);
    store_.put_block(call.account.name, r.container, r.name, block_id, *call.content, read_conditions(r).lease_id);
    call.response.status = 201;
    call.response.set_header("x-ms-request-server-encrypted", "true");
}


void BlobService::put_block_list(StorageCall& call) {
    const StorageRequest& r = call.request;
    std::vector<BlockRef> blocks = parse_block_list(call.body);
    const std::string tier = request_tier(r);  // checked before anything is committed
    BlobInfo b = store_.put_block_list(call.account.name, r.container, r.name, blocks,
                                       content_settings(r, false), read_metadata(r),
                                       read_conditions(r));
    if (!tier.empty()) {
        // The blob's tier, set as Set Blob Tier sets it (a second transaction: a reader between
        // the two sees the inferred tier for a moment). Its lease, if any, is the request's.
        Conditions leased;
        leased.lease_id = read_conditions(r).lease_id;
        store_.set_blob_tier(call.account.name, r.container, r.name, "", tier, leased);
    }
    call.response.status = 201;
    set_version_headers(call.response, b.etag, b.last_modified);
    answer_version_id(r, call.response, b.version_id);
    // The CRC64 of the block list as sent (the service answers it for the request's body).
    call.response.set_header("x-ms-content-crc64", crypto::base64_encode(crypto::crc64(call.body)));
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

void BlobService::get_block_list(StorageCall& call) {
    const StorageRequest& r = call.request;
    std::string type = r.param("blocklisttype").value_or("committed");
    if (type != "committed" && type != "uncommitted" && type != "all") invalid_query("blocklisttype", type);
    const std::string snapshot = blob_target(r);
    BlockLists lists = store_.get_block_lists(call.account.name, r.container, r.name, snapshot);
    const Conditions conditions = read_conditions(r);
    check_tag_condition(conditions, lists.blob ? lists.blob->tags : Tags{});
    if (lists.blob && snapshot.empty()) {
        check_lease_if_named(lists.blob->lease, conditions.lease_id, store_.clock_now(), LeaseTarget::blob);
    }
    // A name with only uncommitted blocks is no blob yet: no version or length to report (recorded).
    if (lists.blob) {
        set_version_headers(call.response, lists.blob->etag, lists.blob->last_modified);
        call.response.set_header("x-ms-blob-content-length", std::to_string(lists.blob->size));
    }
    call.response.set_content(block_list_xml(lists, type != "uncommitted", type != "committed"),
                              "application/xml");
}

void BlobService::get_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string snapshot = blob_target(r);
    auto blob = std::make_shared<OpenBlob>(store_.open_blob(call.account.name, r.container, r.name, snapshot));
    const BlobInfo& b = blob->info;
    const Conditions conditions = read_conditions(r);
    check_read_conditions(conditions, Version{b.etag, b.last_modified, &b.tags});
    if (snapshot.empty()) check_lease_if_named(b.lease, conditions.lease_id, store_.clock_now(), LeaseTarget::blob);
    if (r.method == "GET" && b.tier == "Archive") {
        fail(409, "BlobArchived", "This operation is not permitted on an archived blob.");
    }
    if (r.method == "GET") refuse_on_incremental_copy(b);  // its snapshots are what is read
    // A range past the end is refused before anything of the blob is said (recorded: the 416
    // carries Content-Range alone).
    if (auto range = read_range(r); r.method == "GET" && range && range->first >= b.size) {
        call.response.set_header("Content-Range", "bytes */" + std::to_string(b.size));
        fail(416, "InvalidRange", "The range specified is invalid for the current size of the resource.");
    }
    write_blob_headers(call.response, b, store_.clock_now(), read_version(r) >= "2019-12-12");
    answer_version_of(r, call.response, b);
    if (read_version(r) >= "2020-02-10" && store_.last_access_tracking(call.account.name)) {
        call.response.set_header("x-ms-last-access-time", time::format_rfc1123(last_access_time(b)));
    }
    if (r.method == "HEAD" && b.type == BlobType::block) {
        call.response.set_header("x-ms-access-tier", b.tier.empty() ? "Hot" : b.tier);
        // Only an inferred tier is said to be one (the recorded answers never say "false").
        if (b.tier.empty()) call.response.set_header("x-ms-access-tier-inferred", "true");
        if (!b.tier.empty()) {
            call.response.set_header("x-ms-access-tier-change-time", time::format_rfc1123(b.tier_changed));
        }
        if (!b.archive_status.empty()) call.response.set_header("x-ms-archive-status", b.archive_status);
    }
    answer_with_content(r, call.response,
                        {b.content, b.size,
                         [blob](char* into, size_t size, std::uint64_t offset) {
                             return blob->read(into, size, offset);
                         },
                         blob->in_memory() ? &blob->bytes : nullptr},
                        "x-ms-blob-content-md5");
    // A blob whose content type was cleared (Set Blob Properties without one) has none to report.
    if (r.method == "HEAD" && b.content.content_type.empty()) call.response.headers.erase("Content-Type");
    // A service SAS may name the answer's content headers (rscc, rscd, rsce, rscl, rsct).
    if (call.authorization == Authorization::sas) {
        for (auto [param, header] : {std::pair{"rscc", "Cache-Control"}, std::pair{"rscd", "Content-Disposition"},
                                     std::pair{"rsce", "Content-Encoding"}, std::pair{"rscl", "Content-Language"},
                                     std::pair{"rsct", "Content-Type"}}) {
            if (auto value = r.param(param)) {
                call.response.headers.erase(header);
                call.response.set_header(header, *value);
            }
        }
    }
}

void BlobService::set_blob_properties(StorageCall& call) {
    const StorageRequest& r = call.request;
    BlobInfo b = store_.set_blob_content(call.account.name, r.container, r.name,
                                         content_settings(r, false), read_conditions(r));
    set_version_headers(call.response, b.etag, b.last_modified);
}

void BlobService::set_blob_metadata(StorageCall& call) {
    const StorageRequest& r = call.request;
    BlobInfo b = store_.set_blob_metadata(call.account.name, r.container, r.name, read_metadata(r),
                                          read_conditions(r));
    set_version_headers(call.response, b.etag, b.last_modified);
    answer_version_id(r, call.response, b.version_id);
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

void BlobService::get_blob_metadata(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string snapshot = blob_target(r);
    BlobInfo b = store_.get_blob(call.account.name, r.container, r.name, snapshot);
    const Conditions conditions = read_conditions(r);
    check_read_conditions(conditions, Version{b.etag, b.last_modified, &b.tags});
    if (snapshot.empty()) check_lease_if_named(b.lease, conditions.lease_id, store_.clock_now(), LeaseTarget::blob);
    set_version_headers(call.response, b.etag, b.last_modified);
    answer_version_of(r, call.response, b);
    write_metadata(call.response, b.metadata);
}

void BlobService::delete_blob(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string snapshot = blob_target(r);
    DeleteSnapshots snapshots = DeleteSnapshots::none;
    if (r.has_header("x-ms-delete-snapshots")) {
        const std::string option = r.header("x-ms-delete-snapshots");
        if (option == "include") {
            snapshots = DeleteSnapshots::include;
        } else if (option == "only") {
            snapshots = DeleteSnapshots::only;
        } else {
            invalid_header("x-ms-delete-snapshots", option);
        }
        // A snapshot is deleted alone: the header is for the base blob only.
        if (!snapshot.empty()) invalid_header("x-ms-delete-snapshots", option);
    }
    const bool soft = store_.delete_retention_days(call.account.name) > 0 && !names_version(r);
    store_.delete_blob(call.account.name, r.container, r.name, read_conditions(r), snapshots, snapshot);
    call.response.status = 202;
    // Whether it is gone for good: not while the account keeps deleted blobs (versions always
    // are). The header of service versions 2017-07-29 on, which brought soft delete; every
    // recorded version sends it.
    if (read_version(r) >= "2017-07-29") call.response.set_header("x-ms-delete-type-permanent", soft ? "false" : "true");
}

void BlobService::undelete_blob(StorageCall& call) {
    store_.undelete_blob(call.account.name, call.request.container, call.request.name);
    call.response.status = 200;
}

}  // namespace bai::storage
