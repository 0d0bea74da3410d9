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

namespace {

// Node's Buffer.from(text, "base64"): both alphabets, anything else skipped, trailing bits dropped.
std::string lenient_base64_bytes(std::string_view text) {
    std::string out;
    unsigned bits = 0;
    int count = 0;
    for (char c : text) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+' || c == '-') v = 62;
        else if (c == '/' || c == '_') v = 63;
        else if (c == '=') break;
        else continue;
        bits = (bits << 6) | static_cast<unsigned>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<char>((bits >> count) & 0xff));
        }
    }
    return out;
}

}  // namespace

std::vector<Account> parse_azurite_accounts(std::string_view value) {
    std::vector<Account> out;
    size_t start = 0;
    while (start < value.size()) {
        size_t end = value.find(';', start);
        if (end == std::string_view::npos) end = value.size();
        std::string_view entry = value.substr(start, end - start);
        start = end + 1;
        if (entry.empty()) continue;
        std::vector<std::string> parts;
        size_t from = 0;
        while (true) {
            size_t colon = entry.find(':', from);
            parts.emplace_back(entry.substr(from, colon == std::string_view::npos ? std::string_view::npos : colon - from));
            if (colon == std::string_view::npos) break;
            from = colon + 1;
        }
        if (parts.size() < 2 || parts.size() > 3) {
            throw std::invalid_argument("AZURITE_ACCOUNTS: '" + std::string(entry) + "' is not NAME:KEY1[:KEY2]");
        }
        if (!is_valid_account_name(parts[0])) {
            throw std::invalid_argument("AZURITE_ACCOUNTS: name '" + parts[0] + "' must be 3 to 24 lower-case letters and digits");
        }
        Account account{parts[0], "", ""};
        for (size_t i = 1; i < parts.size(); ++i) {
            std::string bytes = lenient_base64_bytes(parts[i]);
            if (bytes.empty()) throw std::invalid_argument("AZURITE_ACCOUNTS: a key of '" + parts[0] + "' is empty");
            (i == 1 ? account.key1 : account.key2) = crypto::base64_encode(bytes);
        }
        if (account.key2.empty()) account.key2 = account.key1;
        out.push_back(std::move(account));
    }
    return out;
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
