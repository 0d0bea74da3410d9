#include "fake_storage/file/file_service.h"

#include <strings.h>
#include <set>
#include <unistd.h>

#include "common/crypto/base64.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/file/file_permissions.h"
#include "fake_storage/file/file_xml.h"
#include "fake_storage/http/change_feed.h"
#include "fake_storage/file/rename_source.h"
#include "fake_storage/blob/copy_source.h"
#include "common/crypto/random_id.h"
#include "fake_storage/http/container_acl_xml.h"
#include "fake_storage/http/content_response.h"
#include "fake_storage/http/lease_headers.h"
#include "fake_storage/http/service_properties_xml.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {
namespace {

using namespace std::placeholders;

void check_share_name(const std::string& name) {
    if (!is_valid_share_name(name)) {
        fail(400, "InvalidResourceName", "The specifed resource name contains invalid characters.");
    }
}

// x-ms-file-creation-time and its kin: "now", "preserve", or an ISO 8601 time.
std::optional<time::TimePoint> smb_time(const StorageRequest& r, const std::string& name,
                                        bool default_now) {
    if (!r.has_header(name)) return default_now ? std::optional(time::now()) : std::nullopt;
    std::string value = r.header(name);
    if (strcasecmp(value.c_str(), "now") == 0) return time::now();
    if (strcasecmp(value.c_str(), "preserve") == 0) return std::nullopt;
    auto t = time::parse_iso8601(value);
    if (!t) invalid_header(name, value);
    return t;
}

// x-ms-file-attributes as the service writes them back: its names in the order of their flag
// values ("Hidden | Archive"), whatever order and case they came in. A file the request creates
// with attributes that leave out Archive gets it, as the service's files do.
std::optional<std::string> smb_attributes(const StorageRequest& r, bool is_dir, bool creating) {
    if (!r.has_header("x-ms-file-attributes")) return std::nullopt;
    std::string value = r.header("x-ms-file-attributes");
    if (strcasecmp(value.c_str(), "preserve") == 0) return std::nullopt;
    if (strcasecmp(value.c_str(), "none") == 0) return std::string(is_dir ? "Directory" : "Archive");
    // In the order of their FILE_ATTRIBUTE_* values.
    static const char* kKnown[] = {"ReadOnly", "Hidden", "System", "None", "Directory", "Archive",
                                   "Temporary", "Offline", "NotContentIndexed", "NoScrubData"};
    constexpr size_t kArchive = 5;
    bool present[std::size(kKnown)] = {};
    size_t start = 0;
    while (start <= value.size()) {
        size_t bar = value.find('|', start);
        std::string item = value.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        bool known = false;
        for (size_t i = 0; i < std::size(kKnown); ++i) {
            if (strcasecmp(item.c_str(), kKnown[i]) == 0) known = present[i] = true;
        }
        if (!known) invalid_header("x-ms-file-attributes", value);
        if (bar == std::string::npos) break;
        start = bar + 1;
    }
    if (creating && !is_dir) present[kArchive] = true;
    std::string normalised;
    for (size_t i = 0; i < std::size(kKnown); ++i) {
        if (present[i]) normalised += (normalised.empty() ? "" : " | ") + std::string(kKnown[i]);
    }
    return normalised;
}

// x-ms-file-permission: `inherit`, `preserve` or a security descriptor in SDDL of at most 8 KiB
// (larger ones go through Create Permission), else 400 FileInvalidPermission (oversized: 400
// InvalidHeaderValue); or x-ms-file-permission-key, a key of the share (not both). The SDDL to
// keep, if one was given, goes in `sddl`; the key in the update: "" for `inherit` (the default
// permission), none for `preserve` or neither header.
void read_file_permission(const StorageRequest& r, SmbUpdate& u, std::optional<std::string>& sddl) {
    const bool by_value = r.has_header("x-ms-file-permission");
    const bool by_key = r.has_header("x-ms-file-permission-key");
    if (by_value && by_key) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-file-permission-key\n"
             "HeaderValue:" + r.header("x-ms-file-permission-key") + "\n(x-ms-file-permission is given too)");
    }
    if (by_key) {
        const std::string key = r.header("x-ms-file-permission-key");
        if (!is_permission_key(key)) invalid_header("x-ms-file-permission-key", key);
        u.permission_key = default_permission(key) ? "" : key;
        return;
    }
    if (!by_value) return;
    const std::string value = r.header("x-ms-file-permission");
    if (strcasecmp(value.c_str(), "inherit") == 0) {
        u.permission_key = "";
        return;
    }
    if (strcasecmp(value.c_str(), "preserve") == 0) return;
    if (value.size() > kMaxHeaderPermission) invalid_header("x-ms-file-permission", value.substr(0, 64) + "...");
    if (!is_valid_sddl(value)) fail(400, "FileInvalidPermission", "The specified file permission is not valid.");
    u.permission_key = permission_key_for(value);
    sddl = value;
}

SmbUpdate smb_update(const StorageRequest& r, bool is_dir, bool creating) {
    SmbUpdate u;
    u.creation_time = smb_time(r, "x-ms-file-creation-time", creating);
    u.last_write_time = smb_time(r, "x-ms-file-last-write-time", creating);
    u.change_time = smb_time(r, "x-ms-file-change-time", false);
    u.attributes = smb_attributes(r, is_dir, creating);
    return u;
}

ContentSettings file_content_settings(const StorageRequest& r) {
    ContentSettings c;
    c.content_type = r.header("x-ms-content-type");
    c.content_encoding = r.header("x-ms-content-encoding");
    c.content_language = r.header("x-ms-content-language");
    c.cache_control = r.header("x-ms-cache-control");
    c.content_disposition = r.header("x-ms-content-disposition");
    c.content_md5 = r.header("x-ms-content-md5");
    if (!c.content_md5.empty()) {
        auto digest = crypto::base64_decode(c.content_md5);
        if (!digest || digest->size() != 16) invalid_header("x-ms-content-md5", c.content_md5);
    }
    return c;
}

bool has_content_headers(const StorageRequest& r) {
    for (const char* h : {"x-ms-content-type", "x-ms-content-encoding", "x-ms-content-language",
                          "x-ms-cache-control", "x-ms-content-disposition", "x-ms-content-md5"}) {
        if (r.has_header(h)) return true;
    }
    return false;
}

std::optional<std::string> lease_id(const StorageRequest& r) { return read_lease_id(r, "x-ms-lease-id"); }

// x-ms-version at or after `date` (both YYYY-MM-DD): what the service answers depends on it.
bool version_at_least(const StorageRequest& r, const char* date) {
    return read_version(r) >= date;
}

// A read answers whether the entry is stored encrypted (x-ms-server-encrypted), a write whether
// what it wrote was (x-ms-request-server-encrypted).
enum class Answering { read, write };

void write_entry_headers(httplib::Response& res, const ShareEntry& e, Answering answering) {
    set_version_headers(res, e.etag, e.last_modified);
    res.set_header("x-ms-file-creation-time", time::format_iso8601(e.smb.creation_time));
    res.set_header("x-ms-file-last-write-time", time::format_iso8601(e.smb.last_write_time));
    res.set_header("x-ms-file-change-time", time::format_iso8601(e.smb.change_time));
    res.set_header("x-ms-file-attributes", e.smb.attributes);
    res.set_header("x-ms-file-permission-key", permission_key_of(e));
    res.set_header("x-ms-file-id", std::to_string(e.id));
    res.set_header("x-ms-file-parent-id", "0");
    res.set_header(answering == Answering::read ? "x-ms-server-encrypted" : "x-ms-request-server-encrypted", "true");
}

// Access tiers came with 2019-12-12, share leases with 2020-02-10: older versions answer neither.
void write_share_headers(httplib::Response& res, const ShareInfo& s, const StorageRequest& r) {
    set_version_headers(res, s.etag, s.last_modified);
    res.set_header("x-ms-share-quota", std::to_string(s.quota_gib));
    res.set_header("x-ms-has-immutability-policy", "false");
    res.set_header("x-ms-has-legal-hold", "false");
    if (version_at_least(r, "2019-12-12") && s.snapshot.empty()) {  // a snapshot has no tier of its own
        res.set_header("x-ms-access-tier", s.access_tier.empty() ? "TransactionOptimized" : s.access_tier);
        res.set_header("x-ms-access-tier-change-time", time::format_rfc1123(s.access_tier_changed));
    }
    if (version_at_least(r, "2020-02-10")) write_lease_headers(res, s.lease, time::now());
    write_metadata(res, s.metadata);
}

// A boolean header ("true" or "false"); `fallback` when it is absent.
bool bool_header(const StorageRequest& r, const std::string& name, bool fallback) {
    if (!r.has_header(name)) return fallback;
    const std::string value = r.header(name);
    if (strcasecmp(value.c_str(), "true") == 0) return true;
    if (strcasecmp(value.c_str(), "false") == 0) return false;
    invalid_header(name, value);
}

// x-ms-access-tier of Create Share and Set Share Properties: the tiers of a standard account
// (Premium is a premium account's only tier), as the service spells them.
std::optional<std::string> access_tier_header(const StorageRequest& r) {
    if (!r.has_header("x-ms-access-tier")) return std::nullopt;
    const std::string value = r.header("x-ms-access-tier");
    for (const char* tier : {"TransactionOptimized", "Hot", "Cool"}) {
        if (strcasecmp(value.c_str(), tier) == 0) return std::string(tier);
    }
    invalid_header("x-ms-access-tier", value);
}

std::optional<std::int64_t> quota_header(const StorageRequest& r) {
    auto q = read_uint_header(r, "x-ms-share-quota");
    if (!q) return std::nullopt;
    if (*q < 1 || *q > 102400) invalid_header("x-ms-share-quota", r.header("x-ms-share-quota"));
    return static_cast<std::int64_t>(*q);
}

}  // namespace

FileService::FileService(AccountRegistry& accounts, FileStore& store, ContentFiles& files, ServiceSettings& settings)
    : accounts_(accounts),
      store_(store),
      settings_(settings),
      files_(files),
      endpoint_("batchai-emulator-file", accounts, files,
                [this](const StorageRequest& r) { return resolve(r); }) {
    endpoint_.set_settings(&settings_, "file");
    // A share or file SAS may name one of the share's stored access policies (si).
    endpoint_.set_policy_lookup([this](const std::string& account, const std::string& share, const std::string& id) {
        return stored_policy(account, share, id);
    });
}

std::optional<StoredPolicy> FileService::stored_policy(const std::string& account, const std::string& share,
                                                       const std::string& id) {
    try {
        for (const SignedIdentifier& i : store_.get_share(account, split_share_snapshot_key(share).first).identifiers) {
            if (i.id == id) return StoredPolicy{i.start, i.expiry, i.permission};
        }
    } catch (const StorageError&) {
    }
    return std::nullopt;
}

Operation FileService::resolve(const StorageRequest& r) {
    Operation op = resolve_operation(r);
    auto snapshot = r.param("sharesnapshot");
    if (!snapshot || snapshot->empty()) return op;
    // An operation on a share snapshot: a read of it (or its deletion, or a lease on it) is the
    // same operation on the snapshot's key (file_store.h), authorized as on the share.
    auto name = parse_share_snapshot(*snapshot);
    if (!name) invalid_query("sharesnapshot", *snapshot);
    static const std::set<std::string> kOnSnapshots = {
        "GetShareProperties", "DeleteShare", "LeaseShare", "GetShareStats", "ListDirectoriesAndFiles",
        "GetDirectoryProperties", "GetFile", "GetFileProperties", "GetFileMetadata", "ListRanges", "ListHandles",
        "ForceCloseHandles", "GetPermission"};
    if (!kOnSnapshots.contains(op.name)) {
        fail(400, "ShareSnapshotOperationNotSupported", "The operation is not supported on a share snapshot.");
    }
    op.run = [this, run = std::move(op.run), snapshot = *name](StorageCall& call) {
        store_.get_share_snapshot(call.account.name, call.request.container, snapshot);  // 404s first
        call.request.container = share_snapshot_key(call.request.container, snapshot);
        run(call);
    };
    return op;
}

Operation FileService::resolve_operation(const StorageRequest& r) {
    if (r.container.empty()) {
        if (r.method == "GET" && r.param("comp") == "list") {
            return {"ListShares", {SasService::file, "", "", account_only(ResourceLevel::service, "l")}, false,
                    false, nullptr, std::bind(&FileService::list_shares, this, _1)};
        }
        if (r.param("restype") == "service" && r.param("comp") == "properties" && (r.method == "GET" || r.method == "PUT")) {
            const bool get = r.method == "GET";
            return {get ? "GetFileServiceProperties" : "SetFileServiceProperties",
                    {SasService::file, "", "", account_only(ResourceLevel::service, get ? "r" : "w")}, false, false,
                    nullptr,
                    std::bind(get ? &FileService::get_service_properties : &FileService::set_service_properties, this, _1)};
        }
        unsupported(r);
    }
    check_share_name(r.container);
    if (auto comp = r.param("comp"); comp == "listhandles" || comp == "forceclosehandles") return handles_operation(r);
    auto restype = r.param("restype").value_or("");
    if (r.name.empty() && restype != "directory") return share_operation(r);
    split_share_path(r.name);  // 400 InvalidResourceName for what the service refuses
    if (restype == "directory") return directory_operation(r);
    if (r.name.empty()) unsupported(r);
    return file_operation(r);
}

Operation FileService::share_operation(const StorageRequest& r) {
    auto comp = r.param("comp").value_or("");
    if (r.param("restype").value_or("") != "share") unsupported(r);
    const std::string& m = r.method;
    // The share itself: an account SAS only ("You can't grant permissions to read or write share
    // properties or metadata by using a service SAS", nor to delete a share).
    auto op = [&](const char* name, const char* letters, void (FileService::*f)(StorageCall&)) {
        return Operation{name, {SasService::file, r.container, "", account_only(ResourceLevel::container, letters)},
                         false, false, nullptr, std::bind(f, this, _1)};
    };
    if (m == "PUT" && comp.empty()) return op("CreateShare", "cw", &FileService::create_share);
    if ((m == "GET" || m == "HEAD") && (comp.empty() || comp == "metadata")) {
        return op("GetShareProperties", "r", &FileService::share_properties);
    }
    if (m == "DELETE" && comp.empty()) return op("DeleteShare", "d", &FileService::delete_share);
    if (m == "PUT" && comp == "snapshot") return op("SnapshotShare", "cw", &FileService::snapshot_share);
    if (m == "PUT" && comp == "metadata") return op("SetShareMetadata", "w", &FileService::set_share_metadata);
    if (m == "PUT" && comp == "properties") return op("SetShareProperties", "w", &FileService::set_share_properties);
    if (m == "GET" && comp == "stats") return op("GetShareStats", "r", &FileService::share_stats);
    if (m == "PUT" && comp == "lease") return op("LeaseShare", "w", &FileService::lease_share);
    if (m == "PUT" && comp == "filepermission") return op("CreatePermission", "cw", &FileService::create_permission);
    if (m == "GET" && comp == "filepermission") return op("GetPermission", "r", &FileService::get_permission);
    // Restoring a share makes it, as Create Share does.
    if (m == "PUT" && comp == "undelete") return op("UndeleteShare", "cw", &FileService::undelete_share);
    // A share's ACL, as a container's: the account owner's only ("Only the account owner may call
    // this operation"), no SAS.
    if ((m == "GET" || m == "HEAD") && comp == "acl") return op("GetShareACL", "", &FileService::get_share_acl);
    if (m == "PUT" && comp == "acl") return op("SetShareACL", "", &FileService::set_share_acl);
    if (m == "GET" && comp == kChangesComp) {  // authorized as List Directories and Files
        return Operation{"ListChanges",
                         {SasService::file, r.container, "", {ResourceLevel::container, "l", "l", ServiceSasScope::container, false}},
                         false, false, nullptr, std::bind(&FileService::list_changes, this, _1)};
    }
    unsupported(r);
}

Operation FileService::handles_operation(const StorageRequest& r) {
    const bool list = r.param("comp") == "listhandles";
    if (list ? r.method != "GET" : r.method != "PUT") unsupported(r);
    // Choices where the documentation is silent: listing handles takes what listing a share does
    // (l; a share SAS), closing them what writing does (w).
    const char* letters = list ? "l" : "w";
    const ResourceLevel level = r.name.empty() ? ResourceLevel::container : ResourceLevel::object;
    SasRule rule{level, letters, letters, ServiceSasScope::container, false};
    return Operation{list ? "ListHandles" : "ForceCloseHandles", {SasService::file, r.container, r.name, std::move(rule)},
                     false, false, nullptr,
                     std::bind(list ? &FileService::list_handles : &FileService::force_close_handles, this, _1)};
}

Operation FileService::directory_operation(const StorageRequest& r) {
    auto comp = r.param("comp").value_or("");
    const std::string& m = r.method;
    // A directory is an object for an account SAS ("Create an account SAS"). Of a service SAS the
    // documentation names directories for listing only; the emulator lets a share SAS (never a
    // file SAS) do to a directory what its letters allow for a file: a documented choice.
    auto op = [&](const char* name, ResourceLevel level, const char* letters, void (FileService::*f)(StorageCall&)) {
        SasRule rule{level, letters, letters, ServiceSasScope::container, false};
        return Operation{name, {SasService::file, r.container, r.name, std::move(rule)}, false, false, nullptr,
                         std::bind(f, this, _1)};
    };
    if (m == "GET" && comp == "list") {
        return op("ListDirectoriesAndFiles", ResourceLevel::container, "l", &FileService::list_directory);
    }
    if ((m == "GET" || m == "HEAD") && (comp.empty() || comp == "metadata")) {
        return op("GetDirectoryProperties", ResourceLevel::object, "r", &FileService::directory_properties);
    }
    if (r.name.empty()) unsupported(r);
    if (m == "PUT" && comp.empty()) return op("CreateDirectory", ResourceLevel::object, "cw", &FileService::create_directory);
    if (m == "DELETE" && comp.empty()) return op("DeleteDirectory", ResourceLevel::object, "d", &FileService::delete_directory);
    if (m == "PUT" && comp == "metadata") {
        return op("SetDirectoryMetadata", ResourceLevel::object, "w", &FileService::set_directory_metadata);
    }
    if (m == "PUT" && comp == "properties") {
        return op("SetDirectoryProperties", ResourceLevel::object, "w", &FileService::set_directory_properties);
    }
    if (m == "PUT" && comp == "rename") return op("RenameDirectory", ResourceLevel::object, "w", &FileService::rename_directory);
    unsupported(r);
}

Operation FileService::file_operation(const StorageRequest& r) {
    auto comp = r.param("comp").value_or("");
    const std::string& m = r.method;
    // One file: the same letters for an account SAS and a share or file SAS.
    auto op = [&](const char* name, const char* letters, void (FileService::*f)(StorageCall&),
                  bool create_new_only = false) {
        SasRule rule{ResourceLevel::object, letters, letters, ServiceSasScope::container_or_object, create_new_only};
        return Operation{name, {SasService::file, r.container, r.name, std::move(rule)}, false, false, nullptr,
                         std::bind(f, this, _1)};
    };
    // 'c' creates a new file; replacing one takes 'w'.
    if (m == "PUT" && comp.empty() && r.has_header("x-ms-copy-source")) {
        return op("CopyFile", "cw", &FileService::copy_file, true);
    }
    if (m == "PUT" && comp.empty()) return op("CreateFile", "cw", &FileService::create_file, true);
    if (m == "PUT" && comp == "copy") return op("AbortCopyFile", "w", &FileService::abort_copy_file);
    if (m == "PUT" && comp == "range" && r.has_header("x-ms-copy-source")) {
        return op("PutRangeFromURL", "w", &FileService::put_range_from_url);
    }
    if (m == "PUT" && comp == "range") {
        Operation o = op("PutRange", "w", &FileService::put_range);
        o.streams_body = true;
        o.max_body = kMaxRangeSize;
        o.digest_body = true;  // the service answers the range's Content-MD5, asked or not
        return o;
    }
    if ((m == "GET" || m == "HEAD") && comp.empty()) {
        return op(m == "GET" ? "GetFile" : "GetFileProperties", "r", &FileService::get_file);
    }
    if (m == "GET" && comp == "rangelist") return op("ListRanges", "r", &FileService::list_ranges);
    if (m == "PUT" && comp == "properties") return op("SetFileProperties", "w", &FileService::set_file_properties);
    if (m == "PUT" && comp == "metadata") return op("SetFileMetadata", "w", &FileService::set_file_metadata);
    if ((m == "GET" || m == "HEAD") && comp == "metadata") {
        return op("GetFileMetadata", "r", &FileService::get_file_metadata);
    }
    if (m == "DELETE" && comp.empty()) return op("DeleteFile", "d", &FileService::delete_file);
    if (m == "PUT" && comp == "rename") return op("RenameFile", "w", &FileService::rename_file);
    if (m == "PUT" && comp == "lease") return op("LeaseFile", "w", &FileService::lease_file);
    unsupported(r);
}

void FileService::list_shares(StorageCall& call) {
    ListOptions o = list_options(call.request);
    o.max_results_asked = call.request.param("maxresults").has_value();
    o.snapshots = includes(call.request, "snapshots");
    const bool deleted = includes(call.request, "deleted");
    const int retention_days = share_retention_days(call.account.name);
    const time::TimePoint now = time::now();
    if (deleted) store_.purge_deleted_shares(call.account.name, now - std::chrono::hours(24) * retention_days);
    SharePage page = store_.list_shares(call.account.name, o, deleted);
    ListSharesShape shape{includes(call.request, "metadata"), version_at_least(call.request, "2019-12-12"),
                          version_at_least(call.request, "2020-02-10"), now, retention_days};
    call.response.set_content(list_shares_xml(service_endpoint(call), o, page, shape), "application/xml");
}

void FileService::get_service_properties(StorageCall& call) {
    nlohmann::json properties = settings_.get(call.account.name, "file", default_file_service_properties());
    FileServiceShape shape{version_at_least(call.request, "2019-12-12"), version_at_least(call.request, "2020-02-10")};
    call.response.set_content(file_service_properties_xml(properties, shape), "application/xml");
    call.response.set_header("Vary", "Origin");  // as the service answers it
}

void FileService::set_service_properties(StorageCall& call) {
    nlohmann::json update = parse_file_service_properties(call.body);
    settings_.update(call.account.name, "file", default_file_service_properties(),
                     [&](nlohmann::json stored) { return merge_service_properties(std::move(stored), update); });
    call.response.status = 202;
}

void FileService::create_share(StorageCall& call) {
    ShareInfo s = store_.create_share(call.account.name, call.request.container,
                                      quota_header(call.request), read_metadata(call.request),
                                      access_tier_header(call.request));
    call.response.status = 201;
    set_version_headers(call.response, s.etag, s.last_modified);
}

void FileService::share_properties(StorageCall& call) {
    ShareInfo s = store_.get_share(call.account.name, call.request.container);
    check_lease_if_named(s.lease, lease_id(call.request), time::now(), LeaseTarget::container);
    write_share_headers(call.response, s, call.request);
}

void FileService::delete_share(StorageCall& call) {
    const StorageRequest& r = call.request;
    bool with_snapshots = false;
    if (r.has_header("x-ms-delete-snapshots")) {
        const std::string option = r.header("x-ms-delete-snapshots");
        // include-leased (2020-10-02) deletes what include does: leased snapshots are refused.
        if (option != "include" && option != "include-leased") invalid_header("x-ms-delete-snapshots", option);
        with_snapshots = true;
    }
    const std::pair<std::string, std::string> share{call.account.name, r.container};
    const time::TimePoint now = time::now();
    try {
        store_.delete_share(call.account.name, r.container, lease_id(r), with_snapshots,
                            share_soft_delete_on(call.account.name));
    } catch (const StorageError& e) {
        std::lock_guard guard(deleting_mutex_);
        auto it = deleting_.find(share);
        if (e.code() != "ShareNotFound" || it == deleting_.end() || now - it->second > kDeletingFor) throw;
        call.response.status = 202;
        return;
    }
    {
        std::lock_guard guard(deleting_mutex_);
        std::erase_if(deleting_, [&](const auto& kv) { return now - kv.second > kDeletingFor; });
        deleting_[share] = now;
    }
    call.response.status = 202;
}

void FileService::snapshot_share(StorageCall& call) {
    Metadata metadata = read_metadata(call.request);
    ShareInfo s = store_.snapshot_share(call.account.name, call.request.container,
                                        metadata.empty() ? std::nullopt : std::optional(std::move(metadata)));
    call.response.status = 201;
    set_version_headers(call.response, s.etag, s.last_modified);
    call.response.set_header("x-ms-snapshot", s.snapshot);
}

void FileService::set_share_metadata(StorageCall& call) {
    ShareInfo s = store_.set_share_metadata(call.account.name, call.request.container,
                                            read_metadata(call.request), lease_id(call.request));
    set_version_headers(call.response, s.etag, s.last_modified);
}

void FileService::set_share_properties(StorageCall& call) {
    auto quota = quota_header(call.request);
    auto tier = access_tier_header(call.request);
    ShareInfo s = quota || tier ? store_.set_share_properties(call.account.name, call.request.container, quota, tier,
                                                              lease_id(call.request))
                                : store_.get_share(call.account.name, call.request.container);
    set_version_headers(call.response, s.etag, s.last_modified);
}

void FileService::undelete_share(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-deleted-share-name")) missing_header("x-ms-deleted-share-name");
    if (!r.has_header("x-ms-deleted-share-version")) missing_header("x-ms-deleted-share-version");
    const std::string name = r.header("x-ms-deleted-share-name");
    const std::string version = r.header("x-ms-deleted-share-version");
    if (!is_valid_share_name(name)) invalid_header("x-ms-deleted-share-name", name);
    if (!deleted_share_time(version)) invalid_header("x-ms-deleted-share-version", version);
    std::string upper = version;  // as List Shares names it
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const time::TimePoint kept_since = time::now() - std::chrono::hours(24) * share_retention_days(call.account.name);
    ShareInfo s = store_.undelete_share(call.account.name, r.container, name, upper, kept_since);
    call.response.status = 201;
    set_version_headers(call.response, s.etag, s.last_modified);
}

void FileService::get_share_acl(StorageCall& call) {
    ShareInfo s = store_.get_share(call.account.name, call.request.container);
    check_lease_if_named(s.lease, lease_id(call.request), time::now(), LeaseTarget::container);
    set_version_headers(call.response, s.etag, s.last_modified);
    call.response.set_content(signed_identifiers_xml(s.identifiers), "application/xml");
}

void FileService::set_share_acl(StorageCall& call) {
    std::vector<SignedIdentifier> identifiers = parse_signed_identifiers(call.body);
    ShareInfo s = store_.set_share_acl(call.account.name, call.request.container, identifiers, lease_id(call.request));
    set_version_headers(call.response, s.etag, s.last_modified);
}

bool FileService::share_soft_delete_on(const std::string& account) {
    nlohmann::json p = settings_.get(account, "file", default_file_service_properties());
    return p.value("ShareDeleteRetentionPolicy", nlohmann::json::object()).value("Enabled", false);
}

int FileService::share_retention_days(const std::string& account) {
    nlohmann::json p = settings_.get(account, "file", default_file_service_properties());
    const nlohmann::json policy = p.value("ShareDeleteRetentionPolicy", nlohmann::json::object());
    // A share deleted while the policy was on stays its days, 7 (the portal's default) once off.
    const nlohmann::json days = policy.value("Days", nlohmann::json(7));
    return days.is_number_integer() ? days.get<int>() : 7;
}

void FileService::lease_share(StorageCall& call) {
    const LeaseRequest request = lease_request(call.request);
    auto [outcome, s] = store_.lease_share(call.account.name, call.request.container, request);
    write_lease_outcome(call.response, outcome, s.etag, s.last_modified);
    // A share's (or share snapshot's) release names no time left, as 0 (a blob's names none).
    if (request.action == LeaseAction::release) call.response.set_header("x-ms-lease-time", "0");
}

void FileService::share_stats(StorageCall& call) {
    ShareInfo s = store_.get_share(call.account.name, call.request.container);
    std::uint64_t usage = store_.share_usage(call.account.name, call.request.container);
    set_version_headers(call.response, s.etag, s.last_modified);
    call.response.set_content("<?xml version=\"1.0\" encoding=\"utf-8\"?><ShareStats><ShareUsageBytes>" +
                                  std::to_string(usage) + "</ShareUsageBytes></ShareStats>",
                              "application/xml");
}

void FileService::create_directory(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.create_directory(call.account.name, r.container, r.name,
                                           read_metadata(r), smb_for(call, true, true));
    call.response.status = 201;
    write_entry_headers(call.response, e, Answering::write);
}

void FileService::directory_properties(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.get_directory(call.account.name, r.container, r.name);
    write_entry_headers(call.response, e, Answering::read);
    write_metadata(call.response, e.metadata);
}

void FileService::delete_directory(StorageCall& call) {
    store_.delete_directory(call.account.name, call.request.container, call.request.name);
    call.response.status = 202;
}

void FileService::set_directory_metadata(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.set_directory_metadata(call.account.name, r.container, r.name, read_metadata(r));
    set_version_headers(call.response, e.etag, e.last_modified);
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

void FileService::set_directory_properties(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.set_directory_properties(call.account.name, r.container, r.name,
                                                   smb_for(call, true, false));
    write_entry_headers(call.response, e, Answering::write);
}

void FileService::list_directory(StorageCall& call) {
    const StorageRequest& r = call.request;
    ListOptions o = list_options(r);
    o.delimiter.clear();
    o.max_results_asked = r.param("maxresults").has_value();
    DirectoryPage page = store_.list_directory(call.account.name, r.container, r.name, o);
    auto [share, snapshot] = split_share_snapshot_key(r.container);
    // File ids, SMB times, attributes and permission keys in listings came with 2020-04-08.
    call.response.set_content(list_directory_xml(service_endpoint(call), share, snapshot, r.name, o, page,
                                                 version_at_least(r, "2020-04-08")),
                              "application/xml");
}

void FileService::create_file(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-type")) missing_header("x-ms-type");
    if (strcasecmp(r.header("x-ms-type").c_str(), "file") != 0) invalid_header("x-ms-type", r.header("x-ms-type"));
    auto size = read_uint_header(r, "x-ms-content-length");
    if (!size) missing_header("x-ms-content-length");
    ContentSettings content = file_content_settings(r);
    if (content.content_type.empty()) content.content_type = "application/octet-stream";  // as the service answers it
    ShareEntry e = store_.create_file(call.account.name, r.container, r.name, *size, content, read_metadata(r),
                                      smb_for(call, false, true), write_conditions(call).create_new_only,
                                      lease_id(r));
    call.response.status = 201;
    write_entry_headers(call.response, e, Answering::write);
}

void FileService::put_range(StorageCall& call) {
    const StorageRequest& r = call.request;
    std::string write = r.header("x-ms-write");
    std::optional<ByteRange> range = read_range(r);
    if (!range || !range->last) missing_header("x-ms-range");
    std::uint64_t length = *range->last - range->first + 1;
    ShareEntry e;
    if (write == "update") {
        if (call.content->size() != length) {
            fail(400, "InvalidHeaderValue",
                 "The value for one of the HTTP headers is not in the correct format.\n"
                 "HeaderName:Content-Length\nHeaderValue:" + std::to_string(call.content->size()) +
                     "\n(the body must be as long as the range)");
        }
        if (r.has_header("Content-MD5")) check_content_md5(r, call.content->md5());
        e = store_.put_range(call.account.name, r.container, r.name, range->first, *call.content, lease_id(r));
        call.response.set_header("Content-MD5", crypto::base64_encode(call.content->md5()));  // after: a refusal has none
        call.response.set_header("x-ms-request-server-encrypted", "true");
    } else if (write == "clear") {
        if (call.content->size() != 0) invalid_header("Content-Length", std::to_string(call.content->size()));
        e = store_.clear_range(call.account.name, r.container, r.name, range->first, length, lease_id(r));
    } else if (write.empty()) {
        missing_header("x-ms-write");
    } else {
        invalid_header("x-ms-write", write);
    }
    call.response.status = 201;
    set_version_headers(call.response, e.etag, e.last_modified);
    // Put Range names the file's last write time from 2021-06-08 (x-ms-file-last-write-mode).
    if (version_at_least(r, "2021-06-08")) {
        call.response.set_header("x-ms-file-last-write-time", time::format_iso8601(e.smb.last_write_time));
    }
}

void FileService::get_file(StorageCall& call) {
    const StorageRequest& r = call.request;
    auto file = std::make_shared<OpenFile>(store_.open_file(call.account.name, r.container, r.name));
    const ShareEntry& e = file->info;
    const time::TimePoint now = time::now();
    check_lease_if_named(e.lease, lease_id(r), now, LeaseTarget::file);
    write_entry_headers(call.response, e, Answering::read);
    write_metadata(call.response, e.metadata);
    call.response.set_header("x-ms-type", "File");
    if (!is_share_snapshot_key(r.container)) write_lease_headers(call.response, e.lease, now);  // a snapshot's files have none
    if (!e.copy.id.empty()) {  // made by Copy File, complete at once
        call.response.set_header("x-ms-copy-id", e.copy.id);
        call.response.set_header("x-ms-copy-source", e.copy.source);
        call.response.set_header("x-ms-copy-status", "success");
        call.response.set_header("x-ms-copy-progress", std::to_string(e.copy.bytes) + "/" + std::to_string(e.copy.bytes));
        call.response.set_header("x-ms-copy-completion-time", time::format_rfc1123(e.copy.completed));
    }
    answer_with_content(r, call.response,
                        {e.content, e.size,
                         [file](char* into, size_t size, std::uint64_t offset) {
                             return ::pread(file->fd, into, size, static_cast<off_t>(offset));
                         }},
                        "x-ms-content-md5");
    // The service offers ranges on a download, not on Get File Properties.
    if (r.method == "HEAD") call.response.headers.erase("Accept-Ranges");
    // Set File Properties with content headers clears the type it does not name: none is answered
    // then (a file that never had content headers, made through a mount, answers the default).
    const ContentSettings& c = e.content;
    if (c.content_type.empty() && !(c.content_encoding.empty() && c.content_language.empty() && c.cache_control.empty() &&
                                    c.content_disposition.empty() && c.content_md5.empty())) {
        call.response.headers.erase("Content-Type");
    }
}

void FileService::set_file_properties(StorageCall& call) {
    const StorageRequest& r = call.request;
    std::optional<ContentSettings> content;
    if (has_content_headers(r)) content = file_content_settings(r);
    ShareEntry e = store_.set_file_properties(call.account.name, r.container, r.name,
                                              read_uint_header(r, "x-ms-content-length"), content,
                                              smb_for(call, false, false), lease_id(r));
    write_entry_headers(call.response, e, Answering::write);
}

void FileService::set_file_metadata(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.set_file_metadata(call.account.name, r.container, r.name, read_metadata(r), lease_id(r));
    set_version_headers(call.response, e.etag, e.last_modified);
    call.response.set_header("x-ms-request-server-encrypted", "true");
}

void FileService::get_file_metadata(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.get_file(call.account.name, r.container, r.name);
    check_lease_if_named(e.lease, lease_id(r), time::now(), LeaseTarget::file);
    set_version_headers(call.response, e.etag, e.last_modified);
    write_metadata(call.response, e.metadata);
}

void FileService::delete_file(StorageCall& call) {
    store_.delete_file(call.account.name, call.request.container, call.request.name, lease_id(call.request));
    call.response.status = 202;
}

void FileService::list_ranges(StorageCall& call) {
    const StorageRequest& r = call.request;
    ShareEntry e = store_.get_file(call.account.name, r.container, r.name);
    check_lease_if_named(e.lease, lease_id(r), time::now(), LeaseTarget::file);
    std::uint64_t first = 0;
    std::uint64_t last = e.size == 0 ? 0 : e.size - 1;
    if (auto range = read_range(r)) {
        first = range->first;
        if (range->last) last = *range->last;
    }
    // prevsharesnapshot (2020-02-10): what changed since that snapshot of the share.
    std::string previous;
    if (auto prev = r.param("prevsharesnapshot"); prev && !prev->empty()) {
        auto name = parse_share_snapshot(*prev);
        if (!name) invalid_query("prevsharesnapshot", *prev);
        const std::string share = split_share_snapshot_key(r.container).first;
        store_.get_share_snapshot(call.account.name, share, *name);  // 404 ShareSnapshotNotFound
        previous = share_snapshot_key(share, *name);
    }
    auto ranges = store_.list_ranges(call.account.name, r.container, r.name, first, last, previous);
    set_version_headers(call.response, e.etag, e.last_modified);
    call.response.set_header("x-ms-content-length", std::to_string(e.size));
    call.response.set_content(ranges_xml(ranges), "application/xml");
}

void FileService::rename(StorageCall& call, bool directory) {
    const StorageRequest& r = call.request;
    const std::string from = authorize_rename_source(call, accounts_, directory);
    FileStore::RenameOptions o;
    o.replace_if_exists = bool_header(r, "x-ms-file-rename-replace-if-exists", false);
    o.ignore_read_only = bool_header(r, "x-ms-file-rename-ignore-readonly", false);
    if (o.ignore_read_only && !o.replace_if_exists) {
        fail(400, "InvalidHeaderValue",
             "The value for one of the HTTP headers is not in the correct format.\n"
             "HeaderName:x-ms-file-rename-ignore-readonly\nHeaderValue:true\n"
             "(it needs x-ms-file-rename-replace-if-exists: true)");
    }
    if (Metadata metadata = read_metadata(r); !metadata.empty()) o.metadata = std::move(metadata);  // else kept
    o.smb = smb_for(call, directory, false);
    if (!directory && r.has_header("x-ms-content-type")) o.content_type = r.header("x-ms-content-type");
    o.source_lease_id = read_lease_id(r, "x-ms-source-lease-id");
    o.destination_lease_id = read_lease_id(r, "x-ms-destination-lease-id");
    ShareEntry e = store_.rename(call.account.name, r.container, from, r.name, directory, o);
    write_entry_headers(call.response, e, Answering::write);
}

void FileService::lease_file(StorageCall& call) {
    const StorageRequest& r = call.request;
    auto [outcome, e] = store_.lease_file(call.account.name, r.container, r.name, lease_request(r));
    write_lease_outcome(call.response, outcome, e.etag, e.last_modified);
    // A file's lease breaks at once: its break names the lease, and no time left (a share's does).
    if (outcome.status == 202) {
        call.response.headers.erase("x-ms-lease-time");
        call.response.set_header("x-ms-lease-id", outcome.lease.id);
    }
}

namespace {

// Copy File's SMB headers: a time, "now" or an attribute list sets it; "source", "" (as older
// SDKs send it) or nothing keeps the source's.
SmbUpdate copy_smb_update(const StorageRequest& r) {
    auto given = [&](const char* name) {
        return r.has_header(name) && !r.header(name).empty() && strcasecmp(r.header(name).c_str(), "source") != 0;
    };
    SmbUpdate u;
    for (auto [name, field] : {std::pair{"x-ms-file-creation-time", &SmbUpdate::creation_time},
                               std::pair{"x-ms-file-last-write-time", &SmbUpdate::last_write_time},
                               std::pair{"x-ms-file-change-time", &SmbUpdate::change_time}}) {
        if (given(name)) u.*field = smb_time(r, name, false);
    }
    // The copy is a new file: Archive is among the attributes given, as for Create File (recorded).
    if (given("x-ms-file-attributes")) u.attributes = smb_attributes(r, false, true);
    return u;
}

}  // namespace

OpenFile FileService::open_copy_source(const CopySource& source, const std::string& url) {
    std::string source_share = source.container;
    httplib::Params query;
    httplib::detail::parse_query_text(source.query, query);
    if (auto it = query.find("sharesnapshot"); it != query.end() && !it->second.empty()) {
        auto name = parse_share_snapshot(it->second);
        if (!name) invalid_header("x-ms-copy-source", url);
        source_share = share_snapshot_key(source.container, *name);
    }
    try {
        return store_.open_file(source.account, source_share, source.name);
    } catch (const StorageError& e) {
        if (e.status() != 404) throw;
        fail(404, "CannotVerifyCopySource", "The specified resource does not exist.");
    }
}

void FileService::copy_file(StorageCall& call) {
    const StorageRequest& r = call.request;
    const std::string url = r.header("x-ms-copy-source");
    const bool from_blob = names_blob_endpoint(url);
    CopySource source;
    if (from_blob) {
        source = authorize_blob_source(url, call);
    } else {
        source = parse_copy_source(url, r.header("Host"), "x-ms-copy-source", ".file.core.windows.net");
        if (source.name.empty()) invalid_header("x-ms-copy-source", url);
        // A file's source is read with a File SAS of its own, or the key of its account when that
        // key signed the request; files are never public.
        authorize_copy_source(source, call, accounts_, [](const std::string&, const std::string&) { return false; },
                              true, {}, SasService::file);
    }
    if (r.has_header("x-ms-file-permission-copy-mode")) {
        const std::string mode = r.header("x-ms-file-permission-copy-mode");
        if (strcasecmp(mode.c_str(), "source") != 0 && strcasecmp(mode.c_str(), "override") != 0) {
            invalid_header("x-ms-file-permission-copy-mode", mode);
        }
    }
    bool_header(r, "x-ms-file-copy-ignore-read-only", false);
    bool_header(r, "x-ms-file-copy-set-archive", false);
    SmbUpdate smb = copy_smb_update(r);
    // The source's bytes, content headers, metadata and SMB properties: a blob has no SMB
    // properties (the copy is made now, Archive) and no permission.
    std::optional<OpenFile> file;
    std::optional<OpenBlob> blob;
    CopyFrom bytes;
    ContentSettings content;
    Metadata source_metadata;
    SmbProperties source_smb;
    std::string source_key;
    if (from_blob) {
        blob.emplace(open_blob_source(source));
        const OpenBlob& b = *blob;
        bytes = {b.info.size, [&b](char* into, size_t size, std::uint64_t offset) { return b.read(into, size, offset); }, ""};
        content = b.info.content;
        source_metadata = b.info.metadata;
        const time::TimePoint now = time::now();
        source_smb = {now, now, now, "Archive"};
    } else {
        file.emplace(open_copy_source(source, url));
        bytes = copy_from(*file);
        content = file->info.content;
        source_metadata = file->info.metadata;
        source_smb = file->info.smb;
        source_key = file->info.permission_key;
    }
    // The copy's permission: the source's (`source`), the one the request names (`override`), or
    // the default one.
    const std::string mode = r.header("x-ms-file-permission-copy-mode");
    if (strcasecmp(mode.c_str(), "override") == 0) {
        if (!r.has_header("x-ms-file-permission") && !r.has_header("x-ms-file-permission-key")) {
            missing_header("x-ms-file-permission");
        }
        resolve_permission(call, smb);
    } else if (strcasecmp(mode.c_str(), "source") == 0 && !source_key.empty()) {
        if (source.account != call.account.name || split_share_snapshot_key(source.container).first != r.container) {
            if (auto sddl = store_.get_permission(source.account, source.container, source_key)) {
                store_.create_permission(call.account.name, r.container, source_key, *sddl);
            }
        }
        smb.permission_key = source_key;
    }
    Metadata metadata = read_metadata(r);
    ShareEntry::Copy copy{crypto::uuid4(), url};
    ShareEntry e = store_.copy_file(call.account.name, r.container, r.name, bytes, content,
                                    metadata.empty() ? source_metadata : metadata, source_smb, smb, copy,
                                    write_conditions(call).create_new_only, lease_id(r));
    call.response.status = 202;
    set_version_headers(call.response, e.etag, e.last_modified);
    call.response.set_header("x-ms-copy-id", e.copy.id);
    call.response.set_header("x-ms-copy-status", "success");
}

void FileService::abort_copy_file(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-copy-action")) missing_header("x-ms-copy-action");
    if (strcasecmp(r.header("x-ms-copy-action").c_str(), "abort") != 0) {
        invalid_header("x-ms-copy-action", r.header("x-ms-copy-action"));
    }
    if (r.param("copyid").value_or("").empty()) fail(400, "MissingRequiredQueryParameter",
                                                     "A query parameter that's mandatory for this request is not specified.\nQueryParameterName:copyid");
    ShareEntry e = store_.get_file(call.account.name, r.container, r.name);  // 404 first
    check_lease_if_named(e.lease, lease_id(r), time::now(), LeaseTarget::file);
    // Every copy here completes before Copy File answers: none is ever pending.
    fail(409, "NoPendingCopyOperation", "There is currently no pending copy operation.");
}

void FileService::require_handle_target(const StorageCall& call) {
    const StorageRequest& r = call.request;
    if (r.name.empty()) {
        store_.get_share(call.account.name, r.container);  // 404 ShareNotFound
        return;
    }
    try {
        store_.get_file(call.account.name, r.container, r.name);
    } catch (const StorageError& e) {
        if (e.status() != 404 || std::string(e.code()) != "ResourceNotFound") throw;
        store_.get_directory(call.account.name, r.container, r.name);  // a directory's handles, or 404
    }
}

void FileService::list_handles(StorageCall& call) {
    const StorageRequest& r = call.request;
    bool_header(r, "x-ms-recursive", false);
    if (auto max = r.param("maxresults")) {
        char* end = nullptr;
        const long n = std::strtol(max->c_str(), &end, 10);
        if (max->empty() || *end != '\0' || n < 1 || n > 5000) invalid_query("maxresults", *max);
    }
    require_handle_target(call);
    // No SMB server here: nothing holds a handle open (the share mounts are this machine's own).
    call.response.set_content(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults><Entries /><NextMarker /></EnumerationResults>",
        "application/xml");
}

void FileService::force_close_handles(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-handle-id")) missing_header("x-ms-handle-id");
    const std::string id = r.header("x-ms-handle-id");
    // "*" for all of them, or one handle's id as List Handles names it (a decimal number).
    const bool all = id == "*";
    if (!all && (id.empty() || id.size() > 20 || id.find_first_not_of("0123456789") != std::string::npos)) {
        invalid_header("x-ms-handle-id", id);
    }
    bool_header(r, "x-ms-recursive", false);
    require_handle_target(call);
    // No handle is open (see list_handles): one named is not one of this share's, and none is closed.
    call.response.set_header("x-ms-number-of-handles-closed", "0");
    call.response.set_header("x-ms-number-of-handles-failed", "0");
}

SmbUpdate FileService::smb_for(const StorageCall& call, bool is_dir, bool creating) {
    SmbUpdate u = smb_update(call.request, is_dir, creating);
    resolve_permission(call, u);
    return u;
}

void FileService::resolve_permission(const StorageCall& call, SmbUpdate& u) {
    std::optional<std::string> sddl;
    read_file_permission(call.request, u, sddl);
    const std::string& share = call.request.container;
    if (sddl) {
        store_.create_permission(call.account.name, share, *u.permission_key, *sddl);
    } else if (u.permission_key && !u.permission_key->empty() &&
               !store_.get_permission(call.account.name, share, *u.permission_key)) {
        invalid_header("x-ms-file-permission-key", *u.permission_key);  // no permission of the share has it
    }
}

void FileService::create_permission(StorageCall& call) {
    // {"permission": "SDDL"}: the body of at most 64 KiB that a descriptor of that size takes.
    if (call.body.size() > kMaxPermission + 1024) {
        fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
    }
    nlohmann::json body = nlohmann::json::parse(call.body, nullptr, false);
    if (!body.is_object() || !body.contains("permission") || !body["permission"].is_string()) {
        fail(400, "InvalidInput", "One of the request inputs is not valid.\n(the body is {\"permission\": SDDL})");
    }
    const std::string sddl = body["permission"].get<std::string>();
    if (sddl.size() > kMaxPermission) {
        fail(413, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.");
    }
    if (!is_valid_sddl(sddl)) fail(400, "FileInvalidPermission", "The specified file permission is not valid.");
    const std::string key = permission_key_for(sddl);
    store_.create_permission(call.account.name, call.request.container, key, sddl);
    call.response.status = 201;
    call.response.set_header("x-ms-file-permission-key", key);
}

void FileService::get_permission(StorageCall& call) {
    const StorageRequest& r = call.request;
    if (!r.has_header("x-ms-file-permission-key")) missing_header("x-ms-file-permission-key");
    const std::string key = r.header("x-ms-file-permission-key");
    if (!is_permission_key(key)) invalid_header("x-ms-file-permission-key", key);
    std::optional<std::string> sddl = store_.get_permission(call.account.name, r.container, key);  // 404 ShareNotFound
    if (!sddl) sddl = default_permission(key);
    if (!sddl) invalid_header("x-ms-file-permission-key", key);  // no permission of the share has it
    call.response.set_content(nlohmann::json{{"permission", *sddl}}.dump(), "application/json; charset=utf-8");
}

void FileService::list_changes(StorageCall& call) {
    store_.get_share(call.account.name, call.request.container);  // 404 ShareNotFound
    answer_changes(call.request, journal_, call.account.name, call.request.container, call.response);
}

}  // namespace bai::storage
