// The storage account and key that bai puts into mount volumes, as the az CLI did:
// --storage-account-name/--storage-account-key, else $AZURE_BATCHAI_STORAGE_ACCOUNT and
// $AZURE_BATCHAI_STORAGE_KEY; a key not given is read from ARM (listKeys of the account found in
// the subscription), and devstoreaccount1's is the well-known one.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace bai::cli {

class CommandContext;

struct StorageFlags {
    std::string account;
    std::string key;
};

class StorageKeys {
public:
    StorageKeys(CommandContext& ctx, StorageFlags flags);

    // The account to use where a volume or a flag does not name one; `why` names what needs it.
    std::string account(const std::string& why);
    std::string key_for(const std::string& account);

private:
    CommandContext& ctx_;
    StorageFlags flags_;
    std::map<std::string, std::string> keys_;
};

// Fills <AZURE_BATCHAI_STORAGE_ACCOUNT> and <AZURE_BATCHAI_STORAGE_KEY> placeholders and missing
// credentials of the azureFileShares and azureBlobFileSystems in `volumes` (a MountVolumes).
void patch_mount_volumes(nlohmann::json& volumes, StorageKeys& keys);

// Appends a share (--afs-name) or a container (--bfs-name) of the default account.
void add_share_volume(nlohmann::json& volumes, StorageKeys& keys, const std::string& share,
                      const std::string& relative_path);
void add_container_volume(nlohmann::json& volumes, StorageKeys& keys, const std::string& container,
                          const std::string& relative_path);

}  // namespace bai::cli
