// A blob container reached through the Blob REST API, for the blob filesystem on a host that does
// not share the emulator's process (a Slurm host): every operation is a request of the service's
// own (Get Blob Properties, List Blobs, Get Blob, Put Blob or Put Block and Put Block List, Copy
// Blob, Delete Blob), signed with the account's key (SharedKey) or carrying a SAS. Changes made
// elsewhere come from the emulator's change feed (fake_storage/http/change_feed.h), followed by a
// thread of this object's own and published to changes(), so that the mount invalidates its
// kernel's caches as a mount inside the emulator does.
#pragma once

#include <memory>
#include <string>

#include "fuse_mounts/blob/blob_container.h"
#include "fuse_mounts/common/storage_rest_session.h"

namespace bai::mounts {

using BlobRestSettings = StorageRestSettings;

class BlobRestContainer final : public BlobContainer {
public:
    // Throws std::invalid_argument naming what is missing or wrong in `settings`.
    explicit BlobRestContainer(BlobRestSettings settings);

    const std::string& account() const override { return settings().account; }
    const std::string& container() const override { return settings().container; }
    // With a SAS, which cannot read the container's Last-Modified, the time this object was made.
    time::TimePoint modified() override;
    storage::BlobInfo properties(const std::string& name) override;
    storage::BlobListPage list(const storage::ListOptions& options) override;
    storage::OpenBlob open(const std::string& name) override;
    storage::BlobInfo put(const std::string& name, int fd, std::uint64_t size, const storage::ContentSettings& settings,
                          const storage::Metadata& metadata) override;
    void remove(const std::string& name) override;
    void copy(const std::string& from, const std::string& to) override;
    storage::StoreChanges& changes() override { return changes_; }

    // Blobs up to this size are one Put Blob; larger ones are put in blocks of it.
    static constexpr std::uint64_t kPutBlobLimit = 64ull << 20;

private:
    const StorageRestSettings& settings() const { return session_.settings(); }

    storage::StoreChanges changes_;  // before the session, whose feed thread publishes to it
    StorageRestSession session_;
    const time::TimePoint started_ = time::now();  // the container's time, as far as a SAS tells
};

}  // namespace bai::mounts
