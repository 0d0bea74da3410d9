// Containers and block blobs: metadata in SQLite, bytes in ContentFiles. No HTTP here: the Blob
// REST service and the FUSE mounts both call this. Errors are StorageError with the service's
// status and code.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/db/database.h"
#include "fake_storage/engine/blob_tags.h"
#include "fake_storage/engine/conditions.h"
#include "fake_storage/engine/content_files.h"
#include "fake_storage/engine/lease.h"
#include "fake_storage/engine/service_settings.h"
#include "fake_storage/engine/properties.h"
#include "fake_storage/engine/store_changes.h"

namespace bai::storage {

// A stored access policy of a container (Set Container ACL): what a SAS naming it (si) takes
// from it instead of its own st, se and sp.
class BlockLinks;

struct SignedIdentifier {
    std::string id;
    std::optional<time::TimePoint> start;
    std::optional<time::TimePoint> expiry;
    std::string permission;
    bool operator==(const SignedIdentifier&) const = default;
};
inline constexpr size_t kMaxSignedIdentifiers = 5;

struct ContainerInfo {
    std::string name;
    std::string etag;
    time::TimePoint created;
    time::TimePoint last_modified;
    Metadata metadata;
    std::string public_access;  // "", "blob" or "container"
    Lease lease;
    std::vector<SignedIdentifier> identifiers;
    // A soft-deleted container (listed with include=deleted): its version, the deletion's time
    // as a Windows FILETIME in 16 hex digits, as for deleted shares; "" for a live container.
    std::string deleted_version;
};

enum class BlobType { block, page, append };
// "BlockBlob", "PageBlob", "AppendBlob"; and back (nullopt for another name).
const char* blob_type_name(BlobType type);
std::optional<BlobType> blob_type_from_name(std::string_view name);

// The x-ms-copy-* properties of a blob that was the destination of a copy (every copy in the
// emulator completes at once).
struct CopyState {
    std::string id;
    std::string source;  // the URL as the request gave it
    std::string status;  // "success"
    std::string progress;  // "BYTES/BYTES"
    time::TimePoint completed;
    // Incremental Copy Blob's destination and its snapshots: the blob copied from (ACCOUNT/CONTAINER/
    // NAME), the source snapshot last copied, and the destination's snapshot that copy made.
    bool incremental = false;
    std::string incremental_source;
    std::string source_snapshot;
    std::string destination_snapshot;
    bool empty() const { return id.empty(); }
};

struct BlobInfo {
    std::string container;
    std::string name;
    // "" for the base blob; else the snapshot's time, as in its URL, or for a previous version
    // '@' and its version id (see is_previous_version).
    std::string snapshot;
    // The version id: of the current version (the base blob, when written with versioning on)
    // or of a previous version; "" for a blob written with versioning off, and for snapshots.
    std::string version_id;
    std::string content_id;  // "" when the bytes are stored inline or composed

    std::uint64_t size = 0;
    std::string etag;
    time::TimePoint created;
    time::TimePoint last_modified;
    ContentSettings content;
    Metadata metadata;
    // The bytes are the staged blocks the blob was committed from, kept as they were received
    // (Put Block List of large blocks copies nothing); see committed_blocks.content_id.
    bool composed = false;
    Lease lease;
    BlobType type = BlobType::block;
    std::uint64_t committed_block_count = 0;  // append blobs: the Append Blocks since creation
    bool sealed = false;                      // append blobs
    std::int64_t sequence_number = 0;         // page blobs
    std::string tier;                         // "" while inferred (Hot, for block blobs)
    time::TimePoint tier_changed{};
    std::string archive_status;  // "rehydrate-pending-to-hot", ... while rehydrating
    Tags tags;
    CopyState copy;
    std::int64_t row = 0;  // the row in state.db (internal)

    bool is_previous_version() const { return !snapshot.empty() && snapshot.front() == '@'; }
    bool is_snapshot() const { return !snapshot.empty() && snapshot.front() != '@' && snapshot.front() != '!'; }
    // Soft deleted (the account's delete retention policy): the row's key is '!', the time of its
    // deletion (28 characters, to the tick) and the key it had ('' for the blob itself).
    bool is_deleted() const { return !snapshot.empty() && snapshot.front() == '!'; }
    std::string deleted_time() const { return is_deleted() ? snapshot.substr(1, 28) : ""; }
    std::string key_before_deletion() const { return is_deleted() && snapshot.size() > 29 ? snapshot.substr(29) : ""; }
    bool is_current_version() const { return snapshot.empty() && !version_id.empty(); }
};

// The key under which the store reads a version (the `snapshot` argument of the reads, tags,
// tiers and Delete Blob): '@' and the version id; the current version's key reads the base blob.
inline std::string version_key(const std::string& version_id) { return "@" + version_id; }

// 409 OperationNotAllowedOnIncrementalCopyBlob: what the destination of an incremental copy
// refuses (writes; reads of the base blob's bytes: its snapshots are what is read).
void refuse_on_incremental_copy(const BlobInfo& blob);

// A run of a page blob's written pages, [start, end): a run of a block file, or inline bytes.
struct PageRow {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::string content_id;  // "" when inline
    std::uint64_t content_offset = 0;
    std::string data;  // inline
};

// Page blobs: pages of 512 bytes, Put Page of 4 MiB at most, up to 8 TiB.
inline constexpr std::uint64_t kPageSize = 512;
inline constexpr std::uint64_t kMaxPutPage = 4ull * 1024 * 1024;
inline constexpr std::uint64_t kMaxPageBlobSize = 8ull * 1024 * 1024 * 1024 * 1024;

// x-ms-if-sequence-number-le, -lt, -eq (Put Page, Clear Pages).
struct SequenceConditions {
    std::optional<std::int64_t> le, lt, eq;
};

enum class SequenceAction { max, update, increment };

// Get Page Ranges: the written runs (and, against an earlier snapshot, the cleared ones).
struct PageRangeList {
    BlobInfo blob;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pages;    // [first, last] inclusive
    std::vector<std::pair<std::uint64_t, std::uint64_t>> cleared;  // with prevsnapshot
};

// What a write of a whole blob sets besides its bytes, content settings and metadata.
struct BlobTraits {
    BlobType type = BlobType::block;
    Tags tags;         // x-ms-tags (a new body replaces the tags)
    std::string tier;  // x-ms-access-tier; "" inferred
    CopyState copy;
    std::int64_t sequence_number = 0;
    std::uint64_t committed_block_count = 0;
    bool sealed = false;
    std::uint64_t page_blob_size = 0;                 // page blobs: their size
    const std::vector<PageRow>* pages = nullptr;       // page blobs: their written pages (copies)
    // Run in the write's transaction: `check` before the row is written (with the blob it
    // replaces, if any), `then` after it (with the row written). Incremental copies check their
    // destination and snapshot it in the same transaction.
    std::function<void(db::Database&, const std::optional<BlobInfo>&)> check;
    std::function<void(db::Database&, BlobInfo&)> then;
};

// Append Block's own conditions: x-ms-blob-condition-maxsize and -appendpos.
struct AppendConditions {
    std::optional<std::uint64_t> max_size;
    std::optional<std::uint64_t> append_position;
};

// What Delete Blob does with a blob's snapshots (x-ms-delete-snapshots).
enum class DeleteSnapshots { none, include, only };

// A blob that Find Blobs by Tags found: its name and the tags the query named.
struct TaggedBlob {
    std::string container;
    std::string name;
    Tags tags;
};
struct TaggedBlobPage {
    std::vector<TaggedBlob> blobs;
    std::string next_marker;
};

struct BlockInfo {
    std::string id;  // base64, as the client sent it
    std::uint64_t size = 0;
};

enum class BlockListType { committed, uncommitted, latest };

struct BlockRef {
    std::string id;
    BlockListType list;  // where to look: Committed, Uncommitted or Latest
};

struct BlockLists {
    std::vector<BlockInfo> committed;
    std::vector<BlockInfo> uncommitted;
    std::optional<BlobInfo> blob;  // the committed blob, when there is one
};

struct ListOptions {
    std::string prefix;
    std::string delimiter;
    std::string marker;
    int max_results = 5000;
    bool max_results_asked = false;  // the service names MaxResults in a listing only when asked
    bool snapshots = false;    // List Blobs: include=snapshots
    bool versions = false;     // include=versions: previous versions too
    bool uncommitted = false;  // include=uncommittedblobs: names with staged blocks only, too
    bool deleted = false;      // include=deleted: soft deleted blobs (and snapshots, with snapshots)
    // What a mount's listing shows alone: each blob's name, size, times, and the metadata of
    // those of 0 bytes (directory markers); the rest of its BlobInfo left empty.
    bool brief = false;
};

struct BlobListEntry {
    bool is_prefix = false;
    std::string prefix;  // when is_prefix
    BlobInfo blob;       // otherwise
};

struct BlobListPage {
    std::vector<BlobListEntry> entries;
    std::string next_marker;  // empty at the end
};

struct ContainerListPage {
    std::vector<ContainerInfo> containers;
    std::string next_marker;
};

// A run of a committed blob's bytes: behind a descriptor (its content file, one of the blocks it
// was composed of, or a page blob's block file from `file_offset`), or held in memory, or zeros
// (a page blob's unwritten pages). Owns its descriptor unless another part of the same blob does.
struct BlobPart {
    int fd = -1;
    std::uint64_t start = 0;  // where the run begins within the blob
    std::uint64_t size = 0;
    std::uint64_t file_offset = 0;
    std::shared_ptr<const std::string> bytes;  // when fd < 0; neither: zeros
    bool owns = true;
    BlobPart(int fd, std::uint64_t start, std::uint64_t size) : fd(fd), start(start), size(size) {}
    BlobPart(BlobPart&& other) noexcept
        : fd(other.fd), start(other.start), size(other.size), file_offset(other.file_offset),
          bytes(std::move(other.bytes)), owns(other.owns) {
        other.fd = -1;
    }
    BlobPart& operator=(BlobPart&& other) noexcept;
    BlobPart(const BlobPart&) = delete;
    ~BlobPart();
};

// A committed blob opened for reading: its properties and its bytes, either in memory (small
// blobs) or behind descriptors that stay valid even if the blob is replaced or deleted.
struct OpenBlob {
    BlobInfo info;
    // All the bytes when in_memory(); else those after the parts (an append blob's tail).
    std::string bytes;
    std::vector<BlobPart> parts;  // in order: one content file, or the blob's blocks

    bool in_memory() const { return parts.empty(); }
    // The descriptor holding all the bytes, when one does (a content file); else -1.
    int single_fd() const {
        const bool whole = parts.size() == 1 && bytes.empty() && parts.front().file_offset == 0 &&
                           parts.front().size == info.size;
        return whole ? parts.front().fd : -1;
    }
    // Reads up to `size` bytes from `offset` (fewer only at the end); -1 with errno set when the
    // system fails.
    ssize_t read(char* into, size_t size, std::uint64_t offset) const;
};

// A block of a committed blob: where it sits in the blob, and where its bytes are kept.
struct CommittedBlock {
    BlockInfo block;
    std::uint64_t offset = 0;  // within the blob
    std::string content_id;    // its own block file (composed blobs); "" in the blob's content
};

inline constexpr std::uint64_t kMaxBlockSize = 4000ull * 1024 * 1024;
// The largest body of one Put Blob (service versions 2019-12-12 and later).
inline constexpr std::uint64_t kMaxPutBlobSize = 5000ull * 1024 * 1024;
// The largest Append Block body (service versions 2022-11-02 and later).
inline constexpr std::uint64_t kMaxAppendBlockSize = 100ull * 1024 * 1024;
inline constexpr size_t kMaxUncommittedBlocks = 100000;
inline constexpr size_t kMaxCommittedBlocks = 50000;
// Put Block List keeps the staged blocks as the blob's parts (instead of copying them into one
// file) when they are this many at most and kInlineLimit bytes on average: every reader holds
// one descriptor per part.
inline constexpr size_t kMaxBlobParts = 256;

// What staged (uncommitted) blocks hold: of one account, or what a sweep dropped.
struct StagedBlocks {
    std::string account;
    std::uint64_t blobs = 0;
    std::uint64_t blocks = 0;
    std::uint64_t bytes = 0;
};

class BlobStore {
public:
    BlobStore(db::Database& db, ContentFiles& files);

    // The accounts' service properties (Blob and File), kept in the same database.
    ServiceSettings& service_settings() { return settings_; }
    // Blob versioning, an account setting (ARM's blobServices/default isVersioningEnabled, kept
    // with the Blob service properties): off unless turned on.
    bool versioning_enabled(const std::string& account);
    // Blob soft delete, an account setting (the Blob service properties' DeleteRetentionPolicy,
    // which ARM's blobServices/default deleteRetentionPolicy also sets): the days a deleted blob
    // or snapshot is kept, 0 when off.
    int delete_retention_days(const std::string& account);
    // Last access time tracking, an account setting (ARM's blobServices/default
    // lastAccessTimeTrackingPolicy): whether reads and listings name a blob's last access time.
    bool last_access_tracking(const std::string& account) {
        return settings_.flag(account, "blob", "LastAccessTimeTrackingEnabled");
    }
    // Container soft delete, an account setting (ARM's blobServices/default
    // containerDeleteRetentionPolicy): whether Delete Container keeps what it deletes, and the
    // days a deleted container is kept (7 once the policy is off: those deleted while it was on
    // stay their time).
    bool container_soft_delete_on(const std::string& account);
    int container_retention_days(const std::string& account);
    // The service deletes a container in the background: for this long after a Delete Container
    // that kept it (container soft delete on), Create Container of its name is 409
    // ContainerBeingDeleted, another Delete Container of it succeeds again, and List Containers
    // shows the deleted container leased (a fixed lease; expired after), as recorded.
    static constexpr std::chrono::seconds kContainerBeingDeleted{30};
    // Restore Container: the deleted container `deleted_name` of `version` becomes the container
    // `name` with its blobs, metadata and ACL, a new ETag and no lease. 404 ContainerNotFound when
    // no such deleted container is kept (or it was deleted before `kept_since`); 409
    // ContainerAlreadyExists when `name` exists.
    ContainerInfo restore_container(const std::string& account, const std::string& name, const std::string& deleted_name,
                                    const std::string& version, time::TimePoint kept_since);
    // Deleted containers whose retention is over (deleted before `kept_since`) go for good.
    void purge_deleted_containers(const std::string& account, time::TimePoint kept_since);

    // Undelete Blob: a soft deleted blob comes back (when no blob has its name), and so do its
    // soft deleted snapshots; 404 BlobNotFound when there is neither a blob nor a deleted one.
    void undelete_blob(const std::string& account, const std::string& container, const std::string& name);

    // The service drops a blob's uncommitted blocks a week after its last Put Block, as it drops
    // them when the blob is committed or deleted.
    static constexpr std::chrono::hours kStagedBlockLifetime{24 * 7};
    // The time staged blocks are stamped with and aged by: the engine's clock (a scenario's virtual
    // one); time::now until set. Set before serving.
    void set_clock(std::function<time::TimePoint()> now) { clock_ = std::move(now); }
    time::TimePoint clock_now() const { return clock_(); }
    // Drops the staged blocks of every blob whose last Put Block was before `before`, with their
    // files (staged_blocks.cpp); what it dropped, over all accounts.
    StagedBlocks discard_staged_before(time::TimePoint before);
    // What staged blocks hold, per account that has any.
    std::vector<StagedBlocks> staged_blocks_by_account();

    ContainerInfo create_container(const std::string& account, const std::string& name,
                                   const Metadata& metadata, const std::string& public_access);
    ContainerInfo get_container(const std::string& account, const std::string& name);
    // `ignore_lease`: the account itself is going (a deletion through ARM), whatever holds it.
    // With container soft delete on, the container is kept as a deleted one (restore_container);
    // one of its name that is still being deleted is answered as deleted again.
    void delete_container(const std::string& account, const std::string& name,
                          const Conditions& conditions, bool ignore_lease = false);
    ContainerInfo set_container_metadata(const std::string& account, const std::string& name,
                                         const Metadata& metadata, const Conditions& conditions);
    // Set Container ACL: the public access level and the stored access policies, both replaced.
    ContainerInfo set_container_access(const std::string& account, const std::string& name,
                                       const std::string& public_access,
                                       const std::vector<SignedIdentifier>& identifiers,
                                       const Conditions& conditions);
    // With options.deleted, the soft-deleted containers too (deleted_version set), each before
    // a container of its name, the oldest first.
    ContainerListPage list_containers(const std::string& account, const ListOptions& options);
    // Lease Container and Lease Blob (on the store's clock): the lease after the operation, with
    // the resource as it is (a lease changes neither its ETag nor its Last-Modified).
    std::pair<LeaseOutcome, ContainerInfo> lease_container(const std::string& account, const std::string& name,
                                                           const LeaseRequest& request, const Conditions& conditions);
    std::pair<LeaseOutcome, BlobInfo> lease_blob(const std::string& account, const std::string& container,
                                                 const std::string& name, const LeaseRequest& request,
                                                 const Conditions& conditions);

    // Commits `writer`'s bytes as the whole blob (Put Blob), replacing any blob of that name.
    // Append and page blobs are created empty (their size is traits' for a page blob).
    BlobInfo put_blob(const std::string& account, const std::string& container,
                      const std::string& name, ContentWriter& writer,
                      const ContentSettings& content, const Metadata& metadata,
                      const Conditions& conditions, const BlobTraits& traits = {});
    // Append Block: the blob after it and the offset the block was written at. 409
    // InvalidBlobType for a blob of another type, BlobIsSealed once sealed; 412
    // MaxBlobSizeConditionNotMet, AppendPositionConditionNotMet.
    std::pair<BlobInfo, std::uint64_t> append_block(const std::string& account, const std::string& container,
                                                    const std::string& name, ContentWriter& writer,
                                                    const Conditions& conditions,
                                                    const AppendConditions& append);
    // Put Page (update) at `start`, page-aligned, within the blob. 409 InvalidBlobType for a blob
    // of another type; 412 SequenceNumberConditionNotMet; 416 InvalidPageRange.
    BlobInfo put_pages(const std::string& account, const std::string& container, const std::string& name,
                       std::uint64_t start, ContentWriter& writer, const Conditions& conditions,
                       const SequenceConditions& sequence);
    // Put Page (clear): the pages [start, end) read as zeros again and are no longer listed.
    BlobInfo clear_pages(const std::string& account, const std::string& container, const std::string& name,
                         std::uint64_t start, std::uint64_t end, const Conditions& conditions,
                         const SequenceConditions& sequence);
    // Get Page Ranges within [first, last] (the whole blob when not given); with
    // `previous_snapshot`, what changed since that snapshot of the blob.
    PageRangeList get_page_ranges(const std::string& account, const std::string& container, const std::string& name,
                                  const std::string& snapshot,
                                  const std::optional<std::pair<std::uint64_t, std::uint64_t>>& range,
                                  const std::string& previous_snapshot, const Conditions& conditions);
    // Set Blob Properties of a page blob: a new size (pages past it are dropped) and/or sequence
    // number, with the blob's content settings unless `content` is nullopt.
    BlobInfo set_page_blob_properties(const std::string& account, const std::string& container,
                                      const std::string& name, const std::optional<ContentSettings>& content,
                                      std::optional<std::uint64_t> size, std::optional<SequenceAction> action,
                                      std::optional<std::int64_t> sequence_number, const Conditions& conditions);
    // Seal (append blobs): no more Append Blocks. 409 BlobAlreadySealed.
    BlobInfo seal_blob(const std::string& account, const std::string& container, const std::string& name,
                       const Conditions& conditions);
    // Snapshot Blob: a read-only copy of the blob as it is, named by the time it was taken (the
    // copy shares the content files). Metadata: the blob's unless given.
    BlobInfo snapshot_blob(const std::string& account, const std::string& container, const std::string& name,
                           const std::optional<Metadata>& metadata, const Conditions& conditions);
    // Set Blob Tags (of the blob or of one of its snapshots); changes neither ETag nor
    // Last-Modified, as the service does.
    BlobInfo set_blob_tags(const std::string& account, const std::string& container, const std::string& name,
                           const std::string& snapshot, const Tags& tags, const Conditions& conditions);
    // Set Blob Tier (Hot, Cool, Cold, Archive; block blobs). "Archive" makes the blob unreadable
    // until another tier is set (rehydration, done at once: a documented simplification). The
    // bool: the blob was archived (the service answers 202, rehydration pending).
    std::pair<BlobInfo, bool> set_blob_tier(const std::string& account, const std::string& container, const std::string& name,
                           const std::string& snapshot, const std::string& tier, const Conditions& conditions);
    // Find Blobs by Tags: the account's blobs (of one container, when named) whose tags satisfy
    // `where`, by container and name after `marker` ("CONTAINER\nNAME" of the last one given).
    TaggedBlobPage find_blobs_by_tags(const std::string& account, const std::optional<std::string>& container,
                                      const TagExpression& where, const std::string& marker, int max_results);
    // `lease_id`: the request's x-ms-lease-id, checked against a leased blob's lease.
    void put_block(const std::string& account, const std::string& container,
                   const std::string& blob, const std::string& block_id, ContentWriter& writer,
                   const std::optional<std::string>& lease_id = std::nullopt);
    BlobInfo put_block_list(const std::string& account, const std::string& container,
                            const std::string& blob, const std::vector<BlockRef>& blocks,
                            const ContentSettings& content, const Metadata& metadata,
                            const Conditions& conditions);
    // The blob's committed and staged blocks (a snapshot's committed blocks alone).
    BlockLists get_block_lists(const std::string& account, const std::string& container,
                               const std::string& blob, const std::string& snapshot = "");

    BlobInfo get_blob(const std::string& account, const std::string& container,
                      const std::string& name, const std::string& snapshot = "");
    OpenBlob open_blob(const std::string& account, const std::string& container,
                       const std::string& name, const std::string& snapshot = "") {
        return open(account, container, name, nullptr, snapshot);
    }
    // open_blob for the source of a copy: one that does not exist is 404 CannotVerifyCopySource,
    // as the service answers a copy of it. With `blocks`, also its committed blocks.
    OpenBlob open_copy_source(const std::string& account, const std::string& container, const std::string& name,
                              const std::string& snapshot, std::vector<CommittedBlock>* blocks = nullptr);
    BlobInfo set_blob_content(const std::string& account, const std::string& container,
                              const std::string& name, const ContentSettings& content,
                              const Conditions& conditions);
    BlobInfo set_blob_metadata(const std::string& account, const std::string& container,
                               const std::string& name, const Metadata& metadata,
                               const Conditions& conditions);
    // Deletes the blob, or one snapshot of it (`snapshot`), or (DeleteSnapshots::only) its
    // snapshots alone; a blob with snapshots goes only with include (409 SnapshotsPresent). With
    // soft delete on, what goes is kept as soft deleted (versions excepted).
    void delete_blob(const std::string& account, const std::string& container,
                     const std::string& name, const Conditions& conditions,
                     DeleteSnapshots snapshots = DeleteSnapshots::none, const std::string& snapshot = "");
    // What a copy's destination gets besides the source's bytes and properties.
    struct CopyRequest {
        std::optional<Metadata> metadata;  // the source's unless given
        Tags tags;                         // x-ms-tags
        bool source_tags = false;          // the source's tags instead (x-ms-copy-source-tag-option: COPY)
        std::string tier;                  // x-ms-access-tier
        std::string source_url;            // for x-ms-copy-source on the destination
        std::string source_snapshot;
        Conditions source_conditions;      // x-ms-source-if-*
        // Put Blob From URL writes a blob rather than copying one: the destination has no
        // x-ms-copy-* properties, as in the service.
        bool records_copy = true;
    };
    // Copies a committed blob (within the emulator; synchronous), keeping its type.
    BlobInfo copy_blob(const std::string& account, const std::string& container,
                       const std::string& name, const std::string& source_account,
                       const std::string& source_container, const std::string& source_name,
                       const CopyRequest& request, const Conditions& conditions);
    // Incremental Copy Blob: the page blob snapshot `source_snapshot` becomes the destination's
    // content and a new snapshot of the destination (CopyState::destination_snapshot). The
    // destination must not exist or be an incremental copy of the same blob, of an earlier
    // snapshot (409 InvalidBlobType, IncrementalCopyBlobMismatch,
    // IncrementalCopyOfEarlierVersionSnapshotNotAllowed).
    BlobInfo incremental_copy(const std::string& account, const std::string& container, const std::string& name,
                              const std::string& source_account, const std::string& source_container,
                              const std::string& source_name, const CopyRequest& request,
                              const Conditions& conditions);
    BlobListPage list_blobs(const std::string& account, const std::string& container,
                            const ListOptions& options);

    // Content ids that metadata refers to (for ContentFiles::sweep at start).
    std::vector<std::string> live_content_ids();

    // Every change to what a container's mounts show (a blob written, replaced, deleted, resized,
    // its properties or metadata set; a container created or deleted: path ""), published once
    // the call that made it returns. Leases, tags, tiers, staged blocks and snapshots are not.
    StoreChanges& changes() { return changes_; }

private:
    // Publishes a change of a blob (or, with `name` "", of the whole container) when the call
    // that declares it returns without an exception. Declared before the call's locks, it
    // publishes after they are released: a listener may wait for a mount's notifier, whose
    // invalidation may wait for a request of that mount that waits for one of those locks.
    class PublishOnReturn {
    public:
        PublishOnReturn(const StoreChanges& changes, const std::string& account, const std::string& container,
                        const std::string& name);
        ~PublishOnReturn();
        PublishOnReturn(const PublishOnReturn&) = delete;
        PublishOnReturn& operator=(const PublishOnReturn&) = delete;

    private:
        const StoreChanges& changes_;
        const std::string& account_;
        const std::string& container_;
        const std::string& name_;
        int exceptions_;
    };

    BlobInfo copy_page_blob(const std::string& account, const std::string& container, const std::string& name,
                            const OpenBlob& source, const Metadata& metadata, BlobTraits traits,
                            const Conditions& conditions, bool same_account);
    // The runs of an opened page blob for a copy into `account`: its files linked when
    // `same_account`, else (or when the source was replaced since it was opened) its written runs
    // in one new file. The files made are in links.made().
    std::vector<PageRow> copied_page_rows(const std::string& account, const OpenBlob& source, bool same_account,
                                          BlockLinks& links);
    // The parts of an opened page blob (page_blobs.cpp): false when a file went missing.
    bool open_pages(const std::string& account, OpenBlob& open, const std::vector<PageRow>& rows);
    // open_blob, and the committed blocks of what it opened when `blocks` is given.
    OpenBlob open(const std::string& account, const std::string& container,
                  const std::string& name, std::vector<CommittedBlock>* blocks,
                  const std::string& snapshot = "");
    std::mutex& lock_for(const std::string& account, const std::string& container,
                         const std::string& blob);
    // Reads, checks `conditions`, applies `change`, gives a new ETag (unless `same_version`) and
    // saves the properties a change may touch. `new_version`: the change makes a new version of a
    // versioned blob (Set Blob Metadata), keeping the one it replaces.
    BlobInfo update_blob(const std::string& account, const std::string& container,
                         const std::string& name, const Conditions& conditions,
                         const std::function<void(BlobInfo&)>& change, const std::string& snapshot = "",
                         bool same_version = false, bool new_version = false);
    ContainerInfo update_container(const std::string& account, const std::string& name,
                                   const Conditions& conditions,
                                   const std::function<void(ContainerInfo&)>& change);
    void require_container(db::Database& db, const std::string& account,
                           const std::string& container);
    // List Containers with include=deleted (container_soft_delete.cpp).
    ContainerListPage list_containers_with_deleted(const std::string& account, const ListOptions& options);
    // Inside a write: the container `name` (checked) kept as deleted; and whether one of its name
    // was deleted less than kContainerBeingDeleted ago.
    void keep_container_as_deleted(db::Database& db, const std::string& account, const std::string& name);
    bool container_being_deleted(db::Database& db, const std::string& account, const std::string& name);
    // Stores the blob: its bytes are `inline_body`, or the content file `content_id`, or (with
    // neither) the block files that `committed_blocks` name.
    BlobInfo commit_body(const std::string& account, const std::string& container,
                         const std::string& name, const std::string& content_id,
                         std::uint64_t size, const ContentSettings& content,
                         const Metadata& metadata, const Conditions& conditions,
                         const std::vector<CommittedBlock>* committed_blocks,
                         const std::string* inline_body, const BlobTraits& traits = {});
    // Stores what `writer` holds: inline when it is in memory, else as a content file.
    BlobInfo commit_writer(const std::string& account, const std::string& container,
                           const std::string& name, ContentWriter& writer,
                           const ContentSettings& content, const Metadata& metadata,
                           const Conditions& conditions,
                           const std::vector<CommittedBlock>* committed_blocks,
                           const BlobTraits& traits = {});

    // Every change to containers and blobs goes through here: a transaction that also empties
    // the read cache.
    void write(const std::function<void(db::Database&)>& change);

    // What open() read of blobs since the last change (their rows, inline bytes and committed
    // blocks), so that reading a blob again costs no query. Used and changed only under the
    // database's lock (inside db_.read and db_.transaction).
    struct CachedRead {
        BlobInfo info;
        std::string bytes;
        std::vector<CommittedBlock> committed;
        std::vector<PageRow> pages;
    };
    std::map<std::string, CachedRead, std::less<>> read_cache_;
    size_t read_cache_bytes_ = 0;
    static constexpr size_t kReadCacheEntries = 4096;
    static constexpr size_t kReadCacheBytes = 16 << 20;

    StoreChanges changes_;
    db::Database& db_;
    ContentFiles& files_;
    ServiceSettings settings_{db_};
    std::array<std::mutex, 64> blob_locks_;
    std::function<time::TimePoint()> clock_ = [] { return time::now(); };
};

}  // namespace bai::storage
