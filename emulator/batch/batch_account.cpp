#include "emulator/batch/batch_account.h"

#include <algorithm>

#include "fake_storage/accounts/account_registry.h"

namespace bai::batch {

BatchAccount parse_batch_account_flag(std::string_view flag) {
    storage::Account parsed = storage::parse_account_flag(flag, "--batch-account");
    return {parsed.name, parsed.key1, ""};
}

std::vector<BatchAccount> batch_accounts(const std::vector<BatchAccount>& extra) {
    std::vector<BatchAccount> all{{std::string(kDevBatchAccountName), std::string(kDevBatchAccountKey), ""}};
    for (const BatchAccount& a : extra) {
        std::erase_if(all, [&](const BatchAccount& b) { return b.name == a.name; });
        all.push_back(a);
    }
    return all;
}

void BatchAccountRegistry::put(const BatchAccount& account) {
    std::lock_guard lock(mutex_);
    std::erase_if(accounts_, [&](const BatchAccount& b) { return b.name == account.name; });
    accounts_.push_back(account);
}

void BatchAccountRegistry::remove(std::string_view name) {
    std::lock_guard lock(mutex_);
    std::erase_if(accounts_, [&](const BatchAccount& b) { return b.name == name; });
}

std::optional<BatchAccount> BatchAccountRegistry::find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(accounts_.begin(), accounts_.end(), [&](const BatchAccount& a) { return a.name == name; });
    if (it == accounts_.end()) return std::nullopt;
    return *it;
}

std::vector<std::string> BatchAccountRegistry::names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const BatchAccount& a : accounts_) out.push_back(a.name);
    return out;
}

}  // namespace bai::batch
