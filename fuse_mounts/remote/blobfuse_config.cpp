#include "fuse_mounts/remote/blobfuse_config.h"

#include <stdexcept>

#include "common/text/ascii.h"

namespace bai::mounts {

void parse_blobfuse_config(std::string_view text, BlobRestSettings& settings, RemoteVolume volume) {
    const bool share = volume == RemoteVolume::share;
    const std::string volume_key = share ? "shareName" : "containerName";
    const std::string endpoint_key = share ? "fileEndpoint" : "blobEndpoint";
    int number = 0;
    while (!text.empty()) {
        const size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        line = text::trim(line);
        if (line.empty() || line.front() == '#') continue;
        const size_t space = line.find_first_of(" \t");
        const std::string key(line.substr(0, space));
        const std::string value(space == std::string_view::npos ? std::string_view() : text::trim(line.substr(space)));
        const std::string where = "config line " + std::to_string(number) + ": " + key;
        if (value.empty()) throw std::invalid_argument(where + " has no value");
        if (key == "accountName") {
            settings.account = value;
        } else if (key == "accountKey") {
            settings.key = value;
        } else if (key == "sasToken") {
            settings.sas = value;
        } else if (key == volume_key) {
            settings.container = value;
        } else if (key == endpoint_key) {
            settings.endpoint = value;
        } else if (key == "caCertFile") {
            settings.ca_file = value;
        } else if (key == "authType") {
            if (value != "Key" && value != "SAS") {
                throw std::invalid_argument(where + " " + value + ": only Key and SAS are supported");
            }
        } else {
            throw std::invalid_argument(where + ": unknown key" +
                                        (key == "containerName" || key == "shareName" || key == "blobEndpoint" ||
                                                 key == "fileEndpoint"
                                             ? " here (a " + std::string(share ? "share" : "container") + " takes " +
                                                   volume_key + " and " + endpoint_key + ")"
                                             : ""));
        }
    }
}

BlobfuseCommand parse_blobfuse_command(const std::vector<std::string>& args) {
    BlobfuseCommand c;
    auto value_of = [](const std::string& arg, const std::string& flag) -> std::optional<std::string> {
        if (!arg.starts_with(flag + "=")) return std::nullopt;
        std::string value = arg.substr(flag.size() + 1);
        if (value.empty()) throw std::invalid_argument(flag + " has no value");
        return value;
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (auto v = value_of(arg, "--config-file")) {
            c.config_file = *v;
        } else if (auto v = value_of(arg, "--tmp-path")) {
            c.tmp_path = *v;
        } else if (auto v = value_of(arg, "--container-name")) {
            c.container = *v;
        } else if (auto v = value_of(arg, "--share-name")) {
            c.container = *v;
        } else if (arg == "-o") {
            if (i + 1 == args.size()) throw std::invalid_argument("-o has no value");
            c.mount_options += " -o " + args[++i];
        } else if (arg.starts_with("-")) {
            c.mount_options += " " + arg;
        } else if (c.mountpoint.empty()) {
            c.mountpoint = arg;
        } else {
            throw std::invalid_argument("one mount point only: " + arg);
        }
    }
    if (c.mountpoint.empty()) throw std::invalid_argument("no mount point given");
    if (c.config_file.empty()) throw std::invalid_argument("--config-file=FILE is required");
    // What blobfuse or libfuse would refuse is refused here too (blob_mount_options.h).
    BlobFsOptions check;
    apply_blob_mount_options(c.mount_options, check);
    return c;
}

}  // namespace bai::mounts
