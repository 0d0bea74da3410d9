// Batch accounts (issue 9): the accounts whose SharedKey the Batch endpoint accepts. One exists
// always, devbatchaccount1 with a well-known key (as devstoreaccount1 for storage);
// --batch-account NAME:KEY adds others.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bai::batch {

struct BatchAccount {
    std::string name;
    std::string key;  // base64
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

std::optional<BatchAccount> find_account(const std::vector<BatchAccount>& accounts, std::string_view name);

}  // namespace bai::batch
