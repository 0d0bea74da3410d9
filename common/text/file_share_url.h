// The account and share an azureFileUrl names: https://ACCOUNT.file.core.windows.net/SHARE, or an
// emulator's path style http://127.0.0.1:PORT/ACCOUNT/SHARE (also localhost and [::1]). Shared by
// the ARM API (which mounts the share) and bai (which fills its key).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bai::text {

struct FileShareUrl {
    std::string account;
    std::string share;
};

// nullopt when the URL names no account and share.
std::optional<FileShareUrl> parse_file_share_url(std::string_view url);

}  // namespace bai::text
