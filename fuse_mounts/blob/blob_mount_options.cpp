#include "fuse_mounts/blob/blob_mount_options.h"

#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace bai::mounts {

namespace {

// libfuse's and the kernel's -o options that a blobfuse mount passes on without our needing them.
const std::set<std::string> kAcceptedFuseOptions = {
    "allow_other", "allow_root", "default_permissions", "big_writes", "max_read", "max_write", "max_readahead",
    "fsname", "subtype", "auto_cache", "direct_io", "nonempty", "noatime", "atime", "uid", "gid", "umask",
    "async_read", "sync_read", "hard_remove", "use_ino", "readdir_ino", "dev", "nodev", "suid", "nosuid",
    "exec", "noexec", "auto_unmount"};

// blobfuse (v1) flags: accepted, meaningless here (no cache to size, no HTTPS to choose).
const std::set<std::string> kAcceptedBlobfuseFlags = {
    "tmp-path", "config-file", "container-name", "use-https", "file-cache-timeout-in-seconds", "log-level",
    "use-attr-cache", "use-adls", "max-concurrency", "cache-size-mb", "cancel-list-on-mount-seconds",
    "high-disk-threshold", "low-disk-threshold", "upload-modified-only", "cache-poll-timeout-msec",
    "max-eviction", "streaming", "block-size-mb", "max-blocks-per-file", "empty-dir-check",
    "encode-full-file-name", "no-symlinks", "cache-on-list", "invalidate-on-sync", "pre-mount-validate",
    "basic-remount-check", "background-download", "ca-cert-file", "https-proxy", "http-proxy",
    "max-retry", "max-retry-interval-in-seconds", "retry-delay-factor", "set-content-type", "ignore-open-flags"};

double seconds(const std::string& option, const std::string& value) {
    try {
        size_t used = 0;
        double v = std::stod(value, &used);
        if (used != value.size() || !(v >= 0 && v <= 86400 * 365)) throw std::invalid_argument(value);  // NaN too
        return v;
    } catch (const std::exception&) {
        throw std::invalid_argument("mount option " + option + "=" + value + ": not a number of seconds");
    }
}

void apply_fuse_option(const std::string& option, BlobFsOptions& options) {
    const size_t eq = option.find('=');
    const std::string name = option.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
    if (name == "ro") {
        options.read_only = true;
    } else if (name == "rw") {
        options.read_only = false;
    } else if (name == "attr_timeout") {
        options.attr_timeout = seconds(name, value);
    } else if (name == "entry_timeout") {
        options.entry_timeout = seconds(name, value);
    } else if (name == "negative_timeout") {
        options.negative_timeout = seconds(name, value);
    } else if (name == "kernel_cache") {
        options.kernel_cache = true;
    } else if (!kAcceptedFuseOptions.contains(name)) {
        throw std::invalid_argument("unknown mount option -o " + option);
    }
}

}  // namespace

void apply_blob_mount_options(const std::string& text, BlobFsOptions& options) {
    std::istringstream in(text);
    std::vector<std::string> words;
    for (std::string word; in >> word;) words.push_back(word);
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string& word = words[i];
        std::string list;
        if (word == "-o") {
            if (i + 1 == words.size()) throw std::invalid_argument("mount option -o without a value");
            list = words[++i];
        } else if (word.starts_with("-o")) {
            list = word.substr(2);
        } else if (word.starts_with("--")) {
            const std::string flag = word.substr(2, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 2);
            if (!kAcceptedBlobfuseFlags.contains(flag)) throw std::invalid_argument("unknown blobfuse option " + word);
            continue;
        } else {
            throw std::invalid_argument("unknown mount option " + word);
        }
        std::istringstream items(list);
        for (std::string item; std::getline(items, item, ',');) {
            if (!item.empty()) apply_fuse_option(item, options);
        }
    }
}

}  // namespace bai::mounts
