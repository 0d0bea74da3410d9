#include "fuse_mounts/blob/blob_container.h"

namespace bai::mounts {

time::TimePoint StoreContainer::modified() { return blobs_.get_container(account_, container_).last_modified; }

storage::BlobInfo StoreContainer::properties(const std::string& name) {
    return blobs_.get_blob(account_, container_, name);
}

storage::BlobListPage StoreContainer::list(const storage::ListOptions& options) {
    return blobs_.list_blobs(account_, container_, options);
}

storage::OpenBlob StoreContainer::open(const std::string& name) { return blobs_.open_blob(account_, container_, name); }

storage::BlobInfo StoreContainer::put(const std::string& name, int fd, std::uint64_t size,
                                      const storage::ContentSettings& settings, const storage::Metadata& metadata) {
    auto writer = content_.begin(false);
    if (fd >= 0 && size > 0) writer->append_from(fd, 0, size);
    return blobs_.put_blob(account_, container_, name, *writer, settings, metadata, {});
}

void StoreContainer::remove(const std::string& name) {
    blobs_.delete_blob(account_, container_, name, {}, storage::DeleteSnapshots::include);
}

void StoreContainer::copy(const std::string& from, const std::string& to) {
    storage::BlobStore::CopyRequest keep;
    keep.source_tags = true;
    blobs_.copy_blob(account_, container_, to, account_, container_, from, keep, {});
}

}  // namespace bai::mounts
