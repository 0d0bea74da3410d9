// Batch accounts: the accounts whose SharedKey the Batch endpoint accepts. One exists always,
// devbatchaccount1 with a well-known key (as devstoreaccount1 for storage); --batch-account
// NAME:KEY adds others, and so do Microsoft.Batch accounts made through ARM (az batch account
// create), whose keys the Batch endpoint takes at once.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bai::batch {

struct BatchAccount {
    std::string name;
    std::string key;        // base64: the primary key
    std::string secondary;  // base64, or empty: the secondary key
};

inline constexpr std::string_view kDevBatchAccountName = "devbatchaccount1";
// 64 bytes, base64: the emulator's well-known Batch key (never a secret: loopback only).
inline constexpr std::string_view kDevBatchAccountKey =
    "QmF0Y2hFbXVsYXRvckRldkFjY291bnRLZXktbm90LWEtc2VjcmV0LWxvb3BiYWNrLW9ubHktMDAwMDAwMDAwMA==";

// NAME:KEY; a name of 3 to 24 lower-case letters and digits, a base64 key. Throws
// std::invalid_argument naming what is wrong.
BatchAccount parse_batch_account_flag(std::string_view flag);

// devbatchaccount1 first, then `extra` (a later one of the same name replaces an earlier one).
std::vector<BatchAccount> batch_accounts(const std::vector<BatchAccount>& extra);

// The accounts the Batch endpoint knows, shared with ARM, which adds, re-keys and removes them.
class BatchAccountRegistry {
public:
    explicit BatchAccountRegistry(std::vector<BatchAccount> accounts) : accounts_(std::move(accounts)) {}
    // Adds `account`, or replaces the one of its name.
    void put(const BatchAccount& account);
    void remove(std::string_view name);
    std::optional<BatchAccount> find(std::string_view name) const;
    std::vector<std::string> names() const;

private:
    mutable std::mutex mutex_;
    std::vector<BatchAccount> accounts_;
};

}  // namespace bai::batch
