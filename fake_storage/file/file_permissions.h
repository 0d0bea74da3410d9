// File permissions (security descriptors in SDDL): their syntax, the keys that name them, and the
// defaults a file or directory has when none was given.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "fake_storage/engine/file_store.h"

namespace bai::storage {

// x-ms-file-permission carries at most 8 KiB; larger ones go through Create Permission, whose
// body holds a security descriptor of up to 64 KiB (Windows' own limit).
inline constexpr size_t kMaxHeaderPermission = 8 * 1024;
inline constexpr size_t kMaxPermission = 64 * 1024;

// A security descriptor in SDDL: owner (O:), group (G:), DACL (D:) and SACL (S:), each at most
// once, a SID being S-1-... or a two-letter alias, an ACL its flags and (type;flags;rights;
// object guid;inherited object guid;sid[;...]) entries.
bool is_valid_sddl(std::string_view sddl);

// The key of a permission, as the service writes keys ("N*M": two decimal 64-bit numbers), the
// same for the same SDDL in every share.
std::string permission_key_for(std::string_view sddl);
// Whether `key` has a key's shape.
bool is_permission_key(std::string_view key);

// The key a file or directory answers: its own, or the default one (the service's keys for an
// inherited permission of a file and of a directory, as every recording names them).
std::string permission_key_of(const ShareEntry& e);
// The permission a default key names (nullopt for any other key).
std::optional<std::string> default_permission(std::string_view key);

}  // namespace bai::storage
