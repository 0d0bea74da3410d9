// A blob container reached through the Blob REST API, for the blob filesystem on a host that does
// not share the emulator's process (a Slurm host): every operation is a request of the service's
// own (Get Blob Properties, List Blobs, Get Blob, Put Blob or Put Block and Put Block List, Copy
// Blob, Delete Blob), signed with the account's key (SharedKey) or carrying a SAS. Changes made
// elsewhere come from the emulator's change feed (blob_service.h, kChangesComp), followed by a
// thread of this object's own and published to changes(), so that the mount invalidates its
// kernel's caches as a mount inside the emulator does.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fuse_mounts/blob/blob_container.h"

namespace bai::mounts {

struct BlobRestSettings {
    // The service's URL: http(s)://HOST:PORT/ACCOUNT for the emulator (path-style).
    std::string endpoint;
    std::string account;
    std::string key;  // the account's key (base64); or
    std::string sas;  // a SAS for the container (its query, without '?')
    std::string container;
    std::string ca_file;                // HTTPS: the CA to verify the service with ("": the system's)
    std::filesystem::path staging_dir;  // where blobs opened for reading are downloaded (unnamed files)
    bool follow_changes = true;
};

class BlobRestContainer final : public BlobContainer {
public:
    // Throws std::invalid_argument naming what is missing or wrong in `settings`.
    explicit BlobRestContainer(BlobRestSettings settings);
    ~BlobRestContainer() override;

    const std::string& account() const override { return settings_.account; }
    const std::string& container() const override { return settings_.container; }
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
    struct Call;
    // The request's target: the container (empty name) or a blob, and the query (without '?').
    std::string target(const std::string& name, const std::string& query) const;
    // Signs the request (its path the target): SharedKey, or the date and version beside a SAS.
    void sign(httplib::Request& request, long long content_length) const;
    // Sends a request (signed, retried once on a dropped connection); throws StorageError with the
    // service's status and code when it answers an error, 503 ServerUnreachable when it is unreachable.
    httplib::Result send(httplib::Request request, long long content_length = -1);
    std::unique_ptr<httplib::Client> client() const;
    void follow();

    BlobRestSettings settings_;
    std::string origin_;     // scheme://host:port
    std::string base_path_;  // the endpoint's path ("/ACCOUNT" path-style, "" otherwise)
    const time::TimePoint started_ = time::now();  // the container's time, as far as a SAS tells
    storage::StoreChanges changes_;
    std::mutex pool_mutex_;
    std::vector<std::unique_ptr<httplib::Client>> idle_;  // kept-alive connections
    std::thread follower_;
    std::mutex stop_mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    std::shared_ptr<httplib::Client> feed_;  // the change feed's connection (stopped at destruction)
};

}  // namespace bai::mounts
