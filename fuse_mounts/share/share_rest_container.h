// A file share reached through the File REST API, shown by the blob filesystem (blob_fs.h) as a
// container whose directories are entries of their own (hierarchical()): on a host that does not
// share the emulator's process or disk (a Slurm host without the shared data directory). Every
// operation is a request of the service's own: Get File Properties (and Get Directory Properties
// for a name that is no file), List Directories and Files (one directory a listing), Get File,
// Create File and Put Range (only the ranges that hold data), Create/Delete Directory, Delete File,
// Rename File and Rename Directory. Changes made elsewhere come from the share's change feed.
#pragma once

#include <memory>
#include <string>

#include "fuse_mounts/blob/blob_container.h"
#include "fuse_mounts/common/storage_rest_session.h"

namespace bai::mounts {

class ShareRestContainer final : public BlobContainer {
public:
    // `settings.container` is the share's name, `settings.endpoint` the File endpoint. Throws
    // std::invalid_argument naming what is missing or wrong.
    explicit ShareRestContainer(StorageRestSettings settings);

    const std::string& account() const override { return session_.settings().account; }
    const std::string& container() const override { return session_.settings().container; }
    // The share's Last-Modified; with a SAS (which cannot read it), the time this object was made.
    time::TimePoint modified() override;
    // A directory answers as the blob filesystem's directory marker (metadata hdi_isfolder).
    storage::BlobInfo properties(const std::string& name) override;
    // One directory's entries: options.prefix is "" or "DIR/"; a missing directory lists nothing.
    storage::BlobListPage list(const storage::ListOptions& options) override;
    storage::OpenBlob open(const std::string& name) override;
    // A directory marker creates the directory; a file is created at its size and its data put.
    storage::BlobInfo put(const std::string& name, int fd, std::uint64_t size, const storage::ContentSettings& settings,
                          const storage::Metadata& metadata) override;
    // A file, or (when no file has the name) an empty directory.
    void remove(const std::string& name) override;
    void copy(const std::string& from, const std::string& to) override;
    bool hierarchical() const override { return true; }
    bool rename(const std::string& from, const std::string& to, bool directory) override;
    // Set File Properties (x-ms-content-length) when resized, then Put Range of each run.
    bool update(const std::string& name, int fd, std::uint64_t size, bool resize,
                const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) override;
    storage::StoreChanges& changes() override { return changes_; }
    const char* mount_type() const override { return "bai-share"; }

private:
    // Put Range of each run of `fd` (4 MiB at a time), `file`'s ETag and time the last answer's.
    void put_ranges(const std::string& name, int fd, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs,
                    storage::BlobInfo& file);

    storage::StoreChanges changes_;  // before the session, whose feed thread publishes to it
    StorageRestSession session_;
    const time::TimePoint started_ = time::now();
};

}  // namespace bai::mounts
