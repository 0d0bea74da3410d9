// libFuzzer: SharedKey canonicalization and verification. The input is split on newlines into
// the method, the target, then "Name: value" headers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/auth/shared_key.h"
#include "fake_storage/engine/storage_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    httplib::Request http;
    int line = 0;
    while (!input.empty()) {
        size_t end = input.find('\n');
        std::string_view text = input.substr(0, end);
        if (line == 0) {
            http.method = std::string(text);
        } else if (line == 1) {
            http.target = std::string(text);
        } else if (size_t colon = text.find(':'); colon != std::string_view::npos) {
            http.headers.emplace(std::string(text.substr(0, colon)), std::string(text.substr(colon + 1)));
        }
        ++line;
        if (end == std::string_view::npos) break;
        input.remove_prefix(end + 1);
    }
    try {
        bai::storage::StorageRequest r = bai::storage::parse_storage_request(http);
        (void)bai::storage::shared_key_string_to_sign(r, r.raw_path);
        bai::storage::Account account{std::string(bai::storage::kDevAccountName),
                                      std::string(bai::storage::kDevAccountKey),
                                      std::string(bai::storage::kDevAccountKey)};
        bai::storage::verify_shared_key(r, account);
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
