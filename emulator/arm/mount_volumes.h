// The shares and blob containers of a mountVolumes block (a cluster's nodeSetup or a job's), as
// the storage engine names them: which account, which share or container, mounted where.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bai::arm {

struct Volume {
    bool blob = false;
    std::string account;
    std::string container;  // the share or the container
    std::string relative;   // relativeMountPath
    // A share's fileMode and directoryMode (octal text, "0777" when absent or not octal).
    unsigned file_mode = 0777;
    unsigned directory_mode = 0777;
};

// azureFileShares (account from accountName, else from the URL: https://ACCOUNT.file.core.windows.net/SHARE
// or the emulator's path style http://127.0.0.1:PORT/ACCOUNT/SHARE) and azureBlobFileSystems.
// Entries without a usable URL are left out (the validator refuses them before they get here).
std::vector<Volume> volumes_of(const nlohmann::json& mount_volumes);

}  // namespace bai::arm
