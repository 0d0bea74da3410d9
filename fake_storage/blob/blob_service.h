// The Blob REST service (path-style: /ACCOUNT/CONTAINER/BLOB) over the BlobStore.
#pragma once

#include <httplib.h>

#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/change_journal.h"
#include "fake_storage/engine/service_settings.h"
#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

// Put Block, Append Block and Put Page answer one transactional checksum: the Content-MD5 the
// client sent, else the body's CRC64 (never both, as the service answers).
void answer_one_checksum(const StorageRequest& request, httplib::Response& response);

class BlobService {
public:
    BlobService(AccountRegistry& accounts, BlobStore& store, ContentFiles& files, ServiceSettings& settings);
    // http::LeanListener's handler.
    void serve(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* body) {
        endpoint_.serve(req, res, body);
    }
    void set_faults(RequestFaults* faults) { endpoint_.set_faults(faults); }
    void set_token_check(StorageEndpoint::TokenCheck check) { endpoint_.set_token_check(std::move(check)); }
    // Answers the readers of the change feed waiting now, and makes later ones answer at once
    // (before the listener finishes its connections).
    void stop_waiting() { journal_.close(); }

private:
    Operation resolve(const StorageRequest& request);
    Operation service_operation(const StorageRequest& request);
    static bool is_account_information(const StorageRequest& request);
    Operation account_information(const StorageRequest& request);
    Operation container_operation(const StorageRequest& request);
    Operation blob_operation(const StorageRequest& request);

    void list_containers(StorageCall& call);
    void submit_batch(StorageCall& call);
    void get_user_delegation_key(StorageCall& call);
    void get_service_properties(StorageCall& call);
    void set_service_properties(StorageCall& call);
    void get_service_stats(StorageCall& call);
    void create_container(StorageCall& call);
    void container_properties(StorageCall& call);
    void delete_container(StorageCall& call);
    void restore_container(StorageCall& call);
    void set_container_metadata(StorageCall& call);
    void get_container_acl(StorageCall& call);
    void set_container_acl(StorageCall& call);
    void list_blobs(StorageCall& call);
    // blob_changes.cpp: the container's change feed (an extension of the emulator's).
    void list_changes(StorageCall& call);
    void lease_container(StorageCall& call);
    void lease_blob(StorageCall& call);
    void put_blob(StorageCall& call);
    void copy_blob(StorageCall& call);
    void copy_blob_from_url(StorageCall& call);
    void put_blob_from_url(StorageCall& call);
    enum class CopyKind { copy, copy_from_url, put_from_url };
    void copy_into(StorageCall& call, CopyKind kind);
    void put_block(StorageCall& call);
    // blob_from_url.cpp: writes whose bytes come from another blob, and Incremental Copy Blob.
    void put_block_from_url(StorageCall& call);
    void append_block_from_url(StorageCall& call);
    void put_page_from_url(StorageCall& call);
    void incremental_copy_blob(StorageCall& call);
    // The bytes of x-ms-copy-source (within x-ms-source-range, which `range_required` asks for),
    // authorized and checked against x-ms-source-if-* and the source checksums, which the answer
    // names: at most `max_size` of them (413 RequestBodyTooLarge).
    // The bytes read, and their MD5 and CRC64 (raw) for the answer, which names them only once
    // the write is done (an error answer carries neither).
    struct SourceRange {
        std::unique_ptr<ContentWriter> bytes;
        std::string md5;
        std::string crc64;
    };
    SourceRange read_source_range(StorageCall& call, std::uint64_t max_size, bool range_required);
    void put_block_list(StorageCall& call);
    void get_block_list(StorageCall& call);
    void get_blob(StorageCall& call);
    void set_blob_properties(StorageCall& call);
    void set_blob_metadata(StorageCall& call);
    void get_blob_metadata(StorageCall& call);
    void delete_blob(StorageCall& call);
    void undelete_blob(StorageCall& call);
    // blob_kinds.cpp: append blobs, snapshots, tags, tiers.
    void append_block(StorageCall& call);
    void seal_blob(StorageCall& call);
    void snapshot_blob(StorageCall& call);
    void get_blob_tags(StorageCall& call);
    void set_blob_tags(StorageCall& call);
    void set_blob_tier(StorageCall& call);
    void find_blobs_by_tags(StorageCall& call);
    void put_page(StorageCall& call);
    void get_page_ranges(StorageCall& call);
    // Set Blob Properties of a page blob that resizes it or sets its sequence number.
    void set_page_blob_properties(StorageCall& call);

    // authorize_copy_source with this service's public containers and stored policies.
    void authorize_source(const CopySource& source, const StorageCall& call, bool key_covers_own_account);
    // The MD5 and CRC64 (raw) of a blob's bytes, read once (404 CannotVerifyCopySource when it is
    // gone): a copy source's.
    std::pair<std::string, std::string> checksums_of_blob(const std::string& account, const std::string& container,
                                                          const std::string& name, const std::string& snapshot);
    std::optional<StoredPolicy> stored_policy(const std::string& account, const std::string& container,
                                              const std::string& id);
    bool container_is_public(const StorageRequest& request, bool listing);
    bool container_is_public(const std::string& account, const std::string& container);

    AccountRegistry& accounts_;
    BlobStore& store_;
    ContentFiles& files_;
    ServiceSettings& settings_;
    ChangeJournal journal_;
    StorageEndpoint endpoint_;
};

}  // namespace bai::storage
