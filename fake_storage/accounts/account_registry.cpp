#include "fake_storage/accounts/account_registry.h"

#include <mutex>
#include <stdexcept>

#include "common/crypto/base64.h"

namespace bai::storage {

bool is_valid_account_name(std::string_view name) {
    if (name.size() < 3 || name.size() > 24) return false;
    for (char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
}

Account parse_account_flag(std::string_view flag, std::string_view option) {
    const std::string opt(option);
    size_t colon = flag.find(':');
    if (colon == std::string_view::npos) {
        throw std::invalid_argument(opt + " takes NAME:KEY, got '" + std::string(flag) + "'");
    }
    std::string name(flag.substr(0, colon));
    std::string key(flag.substr(colon + 1));
    if (!is_valid_account_name(name)) {
        throw std::invalid_argument(opt + ": name '" + name + "' must be 3 to 24 lower-case letters and digits");
    }
    auto decoded = crypto::base64_decode(key);
    if (!decoded || decoded->empty()) {
        throw std::invalid_argument(opt + ": the key of '" + name + "' is not base64");
    }
    return Account{name, key, key};
}

AccountRegistry::AccountRegistry() {
    std::string key(kDevAccountKey);
    put(Account{std::string(kDevAccountName), key, key});
}

void AccountRegistry::put(const Account& account) {
    std::unique_lock lock(mutex_);
    accounts_[account.name] = account;
}

bool AccountRegistry::remove(std::string_view name) {
    std::unique_lock lock(mutex_);
    auto it = accounts_.find(name);
    if (it == accounts_.end()) return false;
    accounts_.erase(it);
    return true;
}

std::optional<Account> AccountRegistry::find(std::string_view name) const {
    std::shared_lock lock(mutex_);
    auto it = accounts_.find(name);
    if (it == accounts_.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> AccountRegistry::names() const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, account] : accounts_) out.push_back(name);
    return out;
}

std::string connection_string(const Account& account, std::string_view blob_endpoint,
                              std::string_view file_endpoint) {
    std::string s = "DefaultEndpointsProtocol=http;AccountName=" + account.name +
                    ";AccountKey=" + account.key1 + ";BlobEndpoint=" + std::string(blob_endpoint) +
                    "/" + account.name + ";FileEndpoint=" + std::string(file_endpoint) + "/" +
                    account.name + ";";
    return s;
}

}  // namespace bai::storage
