// The Azure Files REST service (path-style: /ACCOUNT/SHARE/DIR/FILE) over the FileStore.
#pragma once

#include <httplib.h>

#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "fake_storage/engine/change_journal.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

struct CopySource;

class FileService {
public:
    // `settings`: the accounts' File service properties (Get/Set File Service Properties), whose
    // CORS rules the endpoint enforces.
    FileService(AccountRegistry& accounts, FileStore& store, ContentFiles& files, ServiceSettings& settings);
    // http::LeanListener's handler.
    void serve(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* body) {
        endpoint_.serve(req, res, body);
    }
    void set_faults(RequestFaults* faults) { endpoint_.set_faults(faults); }
    // The blobs Copy File may copy from, and the port of the Blob endpoint whose URLs name them.
    void set_blob_source(BlobStore* blobs, int port) {
        blobs_ = blobs;
        blob_port_ = port;
    }
    void set_token_check(StorageEndpoint::TokenCheck check) { endpoint_.set_token_check(std::move(check)); }
    // Answers the readers of the change feed waiting now, and makes later ones answer at once.
    void stop_waiting() { journal_.close(); }

private:
    // The operation, on a share snapshot where the request names one (sharesnapshot=).
    Operation resolve(const StorageRequest& request);
    Operation resolve_operation(const StorageRequest& request);
    Operation share_operation(const StorageRequest& request);
    Operation directory_operation(const StorageRequest& request);
    Operation file_operation(const StorageRequest& request);
    // List Handles and Force Close Handles (comp=listhandles, forceclosehandles) on a share, a
    // directory or a file: this emulator serves no SMB, so no handle is ever open.
    Operation handles_operation(const StorageRequest& request);
    void list_handles(StorageCall& call);
    void force_close_handles(StorageCall& call);
    // The share, directory or file the handles operation names: 404 where there is none.
    void require_handle_target(const StorageCall& call);
    // Create Permission and Get Permission (restype=share&comp=filepermission): a share's
    // security descriptors in SDDL, by key (file_permissions.h).
    void create_permission(StorageCall& call);
    void get_permission(StorageCall& call);
    // The SMB properties a request sets (smb_update's), with its permission: x-ms-file-permission
    // (kept as a permission of the share) or x-ms-file-permission-key (one the share holds).
    SmbUpdate smb_for(const StorageCall& call, bool is_dir, bool creating);
    // smb_for's permission part, on `u`.
    void resolve_permission(const StorageCall& call, SmbUpdate& u);

    void list_shares(StorageCall& call);
    void get_service_properties(StorageCall& call);
    void set_service_properties(StorageCall& call);
    void create_share(StorageCall& call);
    void share_properties(StorageCall& call);
    void delete_share(StorageCall& call);
    void snapshot_share(StorageCall& call);
    void set_share_metadata(StorageCall& call);
    void set_share_properties(StorageCall& call);
    void share_stats(StorageCall& call);
    void lease_share(StorageCall& call);
    // Undelete Share (comp=undelete): a share soft-deleted while the account's
    // ShareDeleteRetentionPolicy was on, named by x-ms-deleted-share-name and -version.
    void undelete_share(StorageCall& call);
    void get_share_acl(StorageCall& call);
    void set_share_acl(StorageCall& call);
    // The account's File service properties: whether Delete Share keeps a deleted share, and
    // for how many days.
    bool share_soft_delete_on(const std::string& account);
    int share_retention_days(const std::string& account);
    void lease_file(StorageCall& call);
    void copy_file(StorageCall& call);
    void abort_copy_file(StorageCall& call);
    void create_directory(StorageCall& call);
    void directory_properties(StorageCall& call);
    void delete_directory(StorageCall& call);
    void set_directory_metadata(StorageCall& call);
    void set_directory_properties(StorageCall& call);
    void list_directory(StorageCall& call);
    void create_file(StorageCall& call);
    void put_range(StorageCall& call);
    // Put Range From URL (range_from_url.cpp): x-ms-range written with x-ms-source-range of a
    // file of this emulator read with its own SAS or the account's key.
    void put_range_from_url(StorageCall& call);
    // The file a copy's source URL names (a share snapshot's, with sharesnapshot=), for Copy File
    // and Put Range From URL; 404 CannotVerifyCopySource where there is none.
    OpenFile open_copy_source(const CopySource& source, const std::string& url);
    // Copy File from a blob (copy_from_blob.cpp): whether the source URL is the Blob endpoint's
    // (this emulator's, or the cloud's name for one of its accounts); the blob it names,
    // authorized as Copy Blob authorizes its source; the blob opened (404 CannotVerifyCopySource
    // where there is none, 409 BlobArchived for an archived one).
    bool names_blob_endpoint(const std::string& url) const;
    CopySource authorize_blob_source(const std::string& url, const StorageCall& call);
    OpenBlob open_blob_source(const CopySource& source);
    // The stored access policy `id` of a share (Set Share ACL), for a SAS's si.
    std::optional<StoredPolicy> stored_policy(const std::string& account, const std::string& share, const std::string& id);
    void get_file(StorageCall& call);
    void set_file_properties(StorageCall& call);
    void set_file_metadata(StorageCall& call);
    void get_file_metadata(StorageCall& call);
    void delete_file(StorageCall& call);
    void list_ranges(StorageCall& call);
    // Rename File and Rename Directory.
    void rename(StorageCall& call, bool directory);
    void rename_file(StorageCall& call) { rename(call, false); }
    void rename_directory(StorageCall& call) { rename(call, true); }
    // The share's change feed (fake_storage/http/change_feed.h).
    void list_changes(StorageCall& call);

    AccountRegistry& accounts_;
    FileStore& store_;
    ServiceSettings& settings_;
    ContentFiles& files_;
    BlobStore* blobs_ = nullptr;
    int blob_port_ = 0;
    // Shares deleted in the last kDeletingFor: the service deletes a share in the background, and
    // a Delete Share while it does is answered 202 again (a share listed with its snapshots is
    // deleted twice by clients that delete what they list).
    static constexpr std::chrono::seconds kDeletingFor{30};
    std::mutex deleting_mutex_;
    std::map<std::pair<std::string, std::string>, time::TimePoint> deleting_;
    ChangeJournal journal_{store_.changes()};
    StorageEndpoint endpoint_;
};

}  // namespace bai::storage
