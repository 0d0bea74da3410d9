// The storage accounts the Blob and File services know, with their keys.
#pragma once

#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace bai::storage {

struct Account {
    std::string name;
    std::string key1;  // base64, as the cloud shows keys
    std::string key2;
};

inline constexpr std::string_view kDevAccountName = "devstoreaccount1";
inline constexpr std::string_view kDevAccountKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// Storage account names: 3 to 24 characters, lower-case letters and digits.
bool is_valid_account_name(std::string_view name);

// Parses the --account flag's NAME:KEY (or another option's: --batch-account names accounts by
// the same rule); throws std::invalid_argument naming the option and what is wrong.
Account parse_account_flag(std::string_view flag, std::string_view option = "--account");

// Azurite's AZURITE_ACCOUNTS: "NAME:KEY1[:KEY2][;NAME:KEY1[:KEY2]]...". Keys are decoded as
// Azurite decodes them (Node's lenient base64: the URL-safe alphabet too, other characters
// skipped), so that a key such as "testing_key" signs as it does there; each is kept as the
// standard base64 of its bytes. Throws std::invalid_argument naming the entry that is wrong.
std::vector<Account> parse_azurite_accounts(std::string_view value);

class AccountRegistry {
public:
    // Starts with devstoreaccount1 and its well-known key.
    AccountRegistry();

    // Adds or replaces an account.
    void put(const Account& account);
    bool remove(std::string_view name);
    std::optional<Account> find(std::string_view name) const;
    std::vector<std::string> names() const;

private:
    mutable std::shared_mutex mutex_;
    std::map<std::string, Account, std::less<>> accounts_;
};

// A connection string for the Azure SDKs and az CLI, path-style endpoints.
std::string connection_string(const Account& account, std::string_view blob_endpoint,
                              std::string_view file_endpoint);

}  // namespace bai::storage
