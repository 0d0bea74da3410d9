// The volumes of a mountVolumes block (a cluster's nodeSetup or a job's): shares and blob
// containers as the storage engine names them (which account, which share or container), file
// servers by resource id, unmanaged file systems by their mount command; each mounted where.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bai::arm {

struct Volume {
    enum class Kind { file_share, blob_container, file_server, unmanaged };
    Kind kind = Kind::file_share;
    std::string account;
    std::string container;  // the share or the container
    std::string relative;   // relativeMountPath
    // A share's fileMode and directoryMode (octal text, "0777" when absent or not octal).
    unsigned file_mode = 0777;
    unsigned directory_mode = 0777;
    std::string mount_options;     // a blob container's or a file server's mountOptions
    std::string file_server_id;    // fileServer.id
    std::string source_directory;  // a file server's sourceDirectory ("" for all of it)
    std::string mount_command;     // an unmanaged file system's mountCommand
    // Why the volume cannot be mounted ("" when it can): the service accepted an azureFileUrl that
    // names no share at create, and its nodes failed to mount it.
    std::string invalid;

    bool in_storage() const { return invalid.empty() && (kind == Kind::file_share || kind == Kind::blob_container); }
    bool blob() const { return kind == Kind::blob_container; }
};

// azureFileShares (account from accountName, else from the URL: https://ACCOUNT.file.core.windows.net/SHARE
// or the emulator's path style http://127.0.0.1:PORT/ACCOUNT/SHARE), azureBlobFileSystems, fileServers and
// unmanagedFileSystems, in that order.
// A share whose azureFileUrl names no share is kept with `invalid` set: mounting it fails.
std::vector<Volume> volumes_of(const nlohmann::json& mount_volumes);

// Calls `visit` with each mountVolumes object of a cluster's or job's properties: the cluster's
// nodeSetup.mountVolumes and the job's mountVolumes.
void for_each_mount_volumes(nlohmann::json& properties, const std::function<void(nlohmann::json&)>& visit);

}  // namespace bai::arm
