// The connection of a filesystem on another host to one volume (a blob container or a file
// share) of the emulator's storage REST API: requests signed with the account's key (SharedKey)
// or carrying a SAS, sent over kept-alive connections, their errors turned into
// storage::StorageError; and the volume's change feed (fake_storage/http/change_feed.h) followed
// on a thread of its own, its changes published to a StoreChanges for the mount's notifier.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/store_changes.h"

namespace bai::mounts {

struct StorageRestSettings {
    // The service's URL: http(s)://HOST:PORT/ACCOUNT for the emulator (path-style).
    std::string endpoint;
    std::string account;
    std::string key;  // the account's key (base64); or
    std::string sas;  // a SAS for the volume (its query, without '?')
    std::string container;  // the volume: the container's or the share's name
    std::string ca_file;                // HTTPS: the CA to verify the service with ("": the system's)
    std::filesystem::path staging_dir;  // where files opened for reading are downloaded (unnamed files)
    bool follow_changes = true;
};

// The words of a settings error: which configuration key names what.
struct StorageRestKeys {
    const char* endpoint;  // "blobEndpoint", "fileEndpoint"
    const char* volume;    // "containerName", "shareName"
    const char* service;   // "blob", "file": what an unreachable endpoint is called
};

// `size` bytes of `fd` at `offset` (a staged file being committed); throws when it has fewer.
std::string read_staged(int fd, std::uint64_t offset, std::uint64_t size);

class StorageRestSession {
public:
    // Throws std::invalid_argument naming the key that is missing or wrong in `settings`.
    StorageRestSession(StorageRestSettings settings, StorageRestKeys keys);
    ~StorageRestSession();
    StorageRestSession(const StorageRestSession&) = delete;
    StorageRestSession& operator=(const StorageRestSession&) = delete;

    const StorageRestSettings& settings() const { return settings_; }
    // scheme://host:port
    const std::string& origin() const { return origin_; }
    // The request target of the volume (empty name) or of a name in it, with `query` (without '?')
    // and the SAS, if any.
    std::string target(const std::string& name, const std::string& query) const;
    // Sends a request (signed; retried once on a dropped kept-alive connection); throws
    // StorageError with the service's status and code when it answers an error, 503
    // ServerUnreachable when it is unreachable.
    httplib::Result send(httplib::Request request, long long content_length = -1);
    // The whole of `name` (GET, `operation` in errors: "Get Blob") downloaded into an unnamed file
    // of the staging directory, as blobfuse's file cache does: readers keep that version while
    // open. `info_of` reads its properties from the answer's headers. An error's body is read for
    // its message, as send() does; a body shorter than its properties say is 502 IncompleteBody.
    storage::OpenBlob download_whole(const std::string& name, const char* operation,
                                     const std::function<storage::BlobInfo(const httplib::Response&)>& info_of);
    // Follows the volume's change feed (`restype`: container or share) until destruction,
    // publishing its changes to `changes` ("" for everything when it cannot tell).
    void follow(const std::string& restype, storage::StoreChanges& changes);

private:
    // Signs the request (its path the target): SharedKey, or the date and version beside a SAS.
    void sign(httplib::Request& request, long long content_length) const;
    std::unique_ptr<httplib::Client> client() const;
    void follow_loop(std::string restype, storage::StoreChanges* changes);

    StorageRestSettings settings_;
    StorageRestKeys keys_;
    std::string origin_;     // scheme://host:port
    std::string base_path_;  // the endpoint's path ("/ACCOUNT" path-style, "" otherwise)
    std::mutex pool_mutex_;
    std::vector<std::unique_ptr<httplib::Client>> idle_;  // kept-alive connections
    std::thread follower_;
    std::mutex stop_mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    bool follower_left_ = false;  // follow_loop has returned
    std::shared_ptr<httplib::Client> feed_;  // the change feed's connection (stopped at destruction)
};

}  // namespace bai::mounts
