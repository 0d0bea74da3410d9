#include "fuse_mounts/remote/remote_mount_main.h"

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fuse_mounts/blob/blob_fs.h"
#include "fuse_mounts/blob/blob_mount_options.h"
#include "fuse_mounts/blob/blob_rest_container.h"
#include "fuse_mounts/remote/blobfuse_config.h"
#include "fuse_mounts/share/share_rest_container.h"

namespace {

constexpr const char* kBlobUsage =
    "usage: bai-blobfuse MOUNTPOINT --config-file=FILE [--tmp-path=DIR] [--container-name=NAME]\n"
    "                    [-o ro,attr_timeout=S,entry_timeout=S,negative_timeout=S,...]\n"
    "FILE, as blobfuse's: accountName NAME / accountKey KEY (or sasToken SAS) / containerName NAME /\n"
    "blobEndpoint http://HOST:PORT/ACCOUNT (the emulator's Blob endpoint)\n";
constexpr const char* kShareUsage =
    "usage: bai-sharefuse MOUNTPOINT --config-file=FILE [--tmp-path=DIR] [--share-name=NAME]\n"
    "                     [-o ro,attr_timeout=S,entry_timeout=S,negative_timeout=S,...]\n"
    "FILE, as blobfuse's: accountName NAME / accountKey KEY (or sasToken SAS) / shareName NAME /\n"
    "fileEndpoint http://HOST:PORT/ACCOUNT (the emulator's File endpoint)\n";

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read the config file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

namespace bai::mounts {

int run_remote_mount(int argc, char** argv, RemoteVolume volume) {
    const bool share = volume == RemoteVolume::share;
    const char* program = share ? "bai-sharefuse" : "bai-blobfuse";
    const char* kUsage = share ? kShareUsage : kBlobUsage;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    // Every thread started from here on leaves these signals to the loop below.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, s);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    BlobfuseCommand command;
    BlobRestSettings settings;
    BlobFsOptions options;
    try {
        command = parse_blobfuse_command(args);
        parse_blobfuse_config(read_file(command.config_file), settings, volume);
        if (!command.container.empty()) settings.container = command.container;
        apply_blob_mount_options(command.mount_options, options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n%s", program, e.what(), kUsage);
        return 2;
    }
    const char* tmp = std::getenv("TMPDIR");
    settings.staging_dir = options.staging_dir =
        command.tmp_path.empty() ? std::filesystem::path(tmp && *tmp ? tmp : "/tmp") : std::filesystem::path(command.tmp_path);
    std::error_code ec;
    std::filesystem::create_directories(settings.staging_dir, ec);
    try {
        std::unique_ptr<BlobContainer> remote;
        if (share) {
            remote = std::make_unique<ShareRestContainer>(settings);
        } else {
            remote = std::make_unique<BlobRestContainer>(settings);
        }
        BlobFs fs(std::move(remote), options);
        fs.mount(command.mountpoint);
        std::fprintf(stderr, "%s: %s/%s mounted at %s\n", program, settings.account.c_str(), settings.container.c_str(),
                     command.mountpoint.c_str());
        const timespec slice{0, 200'000'000};
        while (fs.serving()) {
            siginfo_t info{};
            if (sigtimedwait(&stop_signals, &info, &slice) > 0) break;
        }
        fs.unmount();
        std::fprintf(stderr, "%s: unmounted %s\n", program, command.mountpoint.c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: cannot mount %s/%s at %s: %s\n", program, settings.account.c_str(),
                     settings.container.c_str(), command.mountpoint.c_str(), e.what());
        return 1;
    }
}

}  // namespace bai::mounts
