// libFuzzer: what bai-blobfuse and bai-sharefuse read: their config files and command line
// (blobfuse_config.h), and the services' answers (blob_rest_answers.h: List Blobs pages, a blob's
// headers, an error's body; share_rest_answers.h: List Directories and Files pages, a file's headers). The first byte picks the reader; the rest is its input. A reader may refuse, never crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fake_storage/engine/storage_error.h"
#include "fuse_mounts/blob/blob_rest_answers.h"
#include "fuse_mounts/remote/blobfuse_config.h"
#include "fuse_mounts/share/share_rest_answers.h"

using namespace bai::mounts;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        switch (data[0] % 6) {
            case 0: {
                BlobRestSettings settings;
                parse_blobfuse_config(input, settings);
                break;
            }
            case 1: {
                std::vector<std::string> args;
                for (size_t at = 0; at <= input.size();) {
                    const size_t end = std::min(input.find('\0', at), input.size());
                    args.push_back(input.substr(at, end - at));
                    at = end + 1;
                }
                BlobfuseCommand c = parse_blobfuse_command(args);
                if (c.mountpoint.empty() || c.config_file.empty()) __builtin_trap();
                break;
            }
            case 2: {
                bai::storage::BlobListPage page = parse_list_blobs(input, "data");
                for (const auto& e : page.entries) {
                    if (!e.is_prefix && e.blob.container != "data") __builtin_trap();
                }
                break;
            }
            case 3: {
                httplib::Response r;
                r.status = 400;
                const size_t split = input.find("\n\n");
                r.body = split == std::string::npos ? input : input.substr(split + 2);
                std::string_view head(input.data(), split == std::string::npos ? 0 : split);
                while (!head.empty()) {
                    const size_t end = std::min(head.find('\n'), head.size());
                    const std::string_view line = head.substr(0, end);
                    const size_t colon = line.find(':');
                    if (colon != std::string_view::npos) {
                        r.headers.emplace(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
                    }
                    head.remove_prefix(std::min(end + 1, head.size()));
                }
                (void)info_of("data", "blob", r);
                (void)share_file_info("work", "dir/f", r);
                if (error_message(r).empty()) __builtin_trap();
                break;
            }
            case 4: {
                bai::storage::BlobListPage page = parse_list_directory(input, "work", "dir/");
                for (const auto& e : page.entries) {
                    const std::string& name = e.is_prefix ? e.prefix : e.blob.name;
                    if (!name.starts_with("dir/") || name.size() <= 4 || name.find('/', 4) < name.size() - 1) __builtin_trap();
                }
                break;
            }
            case 5: {
                BlobRestSettings settings;
                parse_blobfuse_config(input, settings, RemoteVolume::share);
                break;
            }
        }
    } catch (const std::invalid_argument&) {
    } catch (const bai::storage::StorageError&) {
    }
    return 0;
}
