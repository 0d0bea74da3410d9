// What the blob container filesystem asks of the container it shows: the emulator's BlobStore in
// the same process (StoreContainer, below), or the Blob REST API from another host
// (blob_rest_container.h). Errors are storage::StorageError with the service's status (404 for a
// missing blob or container) as the store throws them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/content_files.h"
#include "fake_storage/engine/store_changes.h"

namespace bai::mounts {

class BlobContainer {
public:
    virtual ~BlobContainer() = default;
    virtual const std::string& account() const = 0;
    virtual const std::string& container() const = 0;

    // The container's Last-Modified (what a virtual directory shows).
    virtual time::TimePoint modified() = 0;
    virtual storage::BlobInfo properties(const std::string& name) = 0;
    // One page (options.marker, max_results; prefix and delimiter as List Blobs).
    virtual storage::BlobListPage list(const storage::ListOptions& options) = 0;
    // The committed blob as it is now: what a reader keeps while its file is open.
    virtual storage::OpenBlob open(const std::string& name) = 0;
    // Commits `size` bytes of `fd` from offset 0 (none when fd < 0) as the whole block blob.
    virtual storage::BlobInfo put(const std::string& name, int fd, std::uint64_t size,
                                  const storage::ContentSettings& settings, const storage::Metadata& metadata) = 0;
    // Deletes the blob and its snapshots.
    virtual void remove(const std::string& name) = 0;
    // Copies a blob within the container, keeping its metadata, properties and tags.
    virtual void copy(const std::string& from, const std::string& to) = 0;
    // Where the container's changes made elsewhere are published (by the store itself, or by what
    // follows the emulator's change feed).
    virtual storage::StoreChanges& changes() = 0;

    // Whether directories are entries of their own (a file share): there until removed, whatever
    // is below them, and removed by remove() only when empty (the service says when not).
    virtual bool hierarchical() const { return false; }
    // Renames a file, or a directory with all it holds, in one call of the service (a file there
    // replaced); false where the service has none (a container: the filesystem copies and deletes).
    virtual bool rename(const std::string& /*from*/, const std::string& /*to*/, bool /*directory*/) { return false; }
    // Writes the runs `ranges` ([start, end) of `fd`) into the existing file `name`, first setting its
    // size to `size` when `resize`: what a file share's writer changed, and nothing else of what
    // others wrote meanwhile (as on an SMB mount). False where the service has no such writes (a
    // block blob is put whole).
    virtual bool update(const std::string& /*name*/, int /*fd*/, std::uint64_t /*size*/, bool /*resize*/,
                        const std::vector<std::pair<std::uint64_t, std::uint64_t>>& /*ranges*/) {
        return false;
    }
    // The mount's type is fuse.<this>.
    virtual const char* mount_type() const { return "bai-blob"; }
};

// The container in the emulator's own BlobStore.
class StoreContainer final : public BlobContainer {
public:
    StoreContainer(storage::BlobStore& blobs, storage::ContentFiles& content, std::string account, std::string container)
        : blobs_(blobs), content_(content), account_(std::move(account)), container_(std::move(container)) {}
    const std::string& account() const override { return account_; }
    const std::string& container() const override { return container_; }
    time::TimePoint modified() override;
    storage::BlobInfo properties(const std::string& name) override;
    storage::BlobListPage list(const storage::ListOptions& options) override;
    storage::OpenBlob open(const std::string& name) override;
    storage::BlobInfo put(const std::string& name, int fd, std::uint64_t size, const storage::ContentSettings& settings,
                          const storage::Metadata& metadata) override;
    void remove(const std::string& name) override;
    void copy(const std::string& from, const std::string& to) override;
    storage::StoreChanges& changes() override { return blobs_.changes(); }

private:
    storage::BlobStore& blobs_;
    storage::ContentFiles& content_;
    std::string account_;
    std::string container_;
};

}  // namespace bai::mounts
