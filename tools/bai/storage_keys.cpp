#include "tools/bai/storage_keys.h"

#include "common/env/variables.h"
#include "common/text/file_share_url.h"
#include "fake_storage/accounts/account_registry.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/command_context.h"
#include "tools/bai/json_fields.h"

namespace bai::cli {
namespace {

using nlohmann::json;

const std::string kAccountPlaceholder = "<AZURE_BATCHAI_STORAGE_ACCOUNT>";
const std::string kKeyPlaceholder = "<AZURE_BATCHAI_STORAGE_KEY>";

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
}

std::string account_of_url(const std::string& url) {
    std::optional<text::FileShareUrl> parsed = text::parse_file_share_url(url);
    return parsed ? parsed->account : "";
}

bool has_credentials(const json& volume) {
    if (!volume.contains("credentials") || !volume["credentials"].is_object()) return false;
    const json& c = volume["credentials"];
    return (c.contains("accountKey") && c["accountKey"].is_string()) ||
           (c.contains("accountKeySecretReference") && c["accountKeySecretReference"].is_object());
}

void fill_credentials(json& volume, const std::string& account, StorageKeys& keys) {
    if (!has_credentials(volume)) {
        volume["credentials"] = {{"accountKey", keys.key_for(account)}};
        return;
    }
    json& c = volume["credentials"];
    if (c.contains("accountKey") && c["accountKey"].is_string()) {
        std::string key = c["accountKey"].get<std::string>();
        if (key.find(kKeyPlaceholder) != std::string::npos) {
            replace_all(key, kKeyPlaceholder, keys.key_for(account));
            c["accountKey"] = key;
        }
    }
}

}  // namespace

StorageKeys::StorageKeys(CommandContext& ctx, StorageFlags flags) : ctx_(ctx), flags_(std::move(flags)) {
    if (flags_.account.empty()) flags_.account = env::variable("AZURE_BATCHAI_STORAGE_ACCOUNT").value_or("");
    if (flags_.key.empty()) flags_.key = env::variable("AZURE_BATCHAI_STORAGE_KEY").value_or("");
}

std::string StorageKeys::account(const std::string& why) {
    if (flags_.account.empty()) {
        throw CliError(why + " needs a storage account: pass --storage-account-name or set AZURE_BATCHAI_STORAGE_ACCOUNT",
                       kExitUsage);
    }
    return flags_.account;
}

std::string StorageKeys::key_for(const std::string& account) {
    if (!flags_.key.empty() && (account == flags_.account || flags_.account.empty())) return flags_.key;
    if (auto it = keys_.find(account); it != keys_.end()) return it->second;
    if (account == storage::kDevAccountName) return std::string(storage::kDevAccountKey);
    ArmClient& arm = ctx_.arm();
    json accounts = arm.list("/subscriptions/" + arm.subscription() + "/providers/Microsoft.Storage/storageAccounts", kStorageApi);
    for (const json& a : accounts) {
        if (string_field(a, "name") != account) continue;
        json listed = arm.post(string_field(a, "id") + "/listKeys", kStorageApi);
        if (listed.is_object() && listed.contains("keys") && listed["keys"].is_array() && !listed["keys"].empty()) {
            return keys_[account] = string_field(listed["keys"][0], "value");
        }
    }
    throw CliError("cannot find the key of storage account '" + account +
                   "': it is not in the subscription; pass --storage-account-key or set AZURE_BATCHAI_STORAGE_KEY");
}

void patch_mount_volumes(json& volumes, StorageKeys& keys) {
    if (!volumes.is_object()) return;
    if (volumes.contains("azureFileShares") && volumes["azureFileShares"].is_array()) {
        for (json& v : volumes["azureFileShares"]) {
            if (!v.is_object()) continue;
            std::string url = string_field(v, "azureFileUrl");
            if (url.find(kAccountPlaceholder) != std::string::npos) {
                replace_all(url, kAccountPlaceholder, keys.account("azureFileUrl " + url));
                v["azureFileUrl"] = url;
            }
            std::string account = string_field(v, "accountName");
            if (account.empty() || account.find(kAccountPlaceholder) != std::string::npos) account = account_of_url(url);
            v["accountName"] = account;
            fill_credentials(v, account, keys);
        }
    }
    if (volumes.contains("azureBlobFileSystems") && volumes["azureBlobFileSystems"].is_array()) {
        for (json& v : volumes["azureBlobFileSystems"]) {
            if (!v.is_object()) continue;
            std::string account = string_field(v, "accountName");
            if (account.empty() || account.find(kAccountPlaceholder) != std::string::npos) {
                std::string given = account;
                account = keys.account("azureBlobFileSystems container " + string_field(v, "containerName"));
                if (!given.empty()) {
                    replace_all(given, kAccountPlaceholder, account);
                    account = given;
                }
            }
            v["accountName"] = account;
            fill_credentials(v, account, keys);
        }
    }
}

void add_share_volume(json& volumes, StorageKeys& keys, const std::string& share, const std::string& relative_path) {
    std::string account = keys.account("--afs-name");
    json v = {{"accountName", account},
              {"azureFileUrl", "https://" + account + ".file.core.windows.net/" + share},
              {"credentials", {{"accountKey", keys.key_for(account)}}},
              {"relativeMountPath", relative_path}};
    volumes["azureFileShares"].push_back(v);
}

void add_container_volume(json& volumes, StorageKeys& keys, const std::string& container,
                          const std::string& relative_path) {
    std::string account = keys.account("--bfs-name");
    json v = {{"accountName", account},
              {"containerName", container},
              {"credentials", {{"accountKey", keys.key_for(account)}}},
              {"relativeMountPath", relative_path}};
    volumes["azureBlobFileSystems"].push_back(v);
}

}  // namespace bai::cli
