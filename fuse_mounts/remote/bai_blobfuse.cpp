// bai-blobfuse: mounts a blob container of the emulator through its Blob REST API, on a host that
// does not share the emulator's process or disk (a Slurm host), as blobfuse mounts one of Azure
// Storage: `bai-blobfuse MOUNTPOINT --config-file=FILE [--tmp-path=DIR] [-o OPTIONS]`
// (blobfuse_config.h). It serves in the foreground until it gets SIGTERM, SIGINT or SIGHUP
// (then it commits what is staged and unmounts) or the mount is unmounted (fusermount -u).
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fuse_mounts/blob/blob_fs.h"
#include "fuse_mounts/blob/blob_mount_options.h"
#include "fuse_mounts/blob/blob_rest_container.h"
#include "fuse_mounts/remote/blobfuse_config.h"

namespace {

constexpr const char* kUsage =
    "usage: bai-blobfuse MOUNTPOINT --config-file=FILE [--tmp-path=DIR] [--container-name=NAME]\n"
    "                    [-o ro,attr_timeout=S,entry_timeout=S,negative_timeout=S,...]\n"
    "FILE, as blobfuse's: accountName NAME / accountKey KEY (or sasToken SAS) / containerName NAME /\n"
    "blobEndpoint http://HOST:PORT/ACCOUNT (the emulator's Blob endpoint)\n";

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument("cannot read the config file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int main(int argc, char** argv) {
    using namespace bai::mounts;
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
        parse_blobfuse_config(read_file(command.config_file), settings);
        if (!command.container.empty()) settings.container = command.container;
        apply_blob_mount_options(command.mount_options, options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bai-blobfuse: %s\n%s", e.what(), kUsage);
        return 2;
    }
    const char* tmp = std::getenv("TMPDIR");
    settings.staging_dir = options.staging_dir =
        command.tmp_path.empty() ? std::filesystem::path(tmp && *tmp ? tmp : "/tmp") : std::filesystem::path(command.tmp_path);
    std::error_code ec;
    std::filesystem::create_directories(settings.staging_dir, ec);
    try {
        BlobFs fs(std::make_unique<BlobRestContainer>(settings), options);
        fs.mount(command.mountpoint);
        std::fprintf(stderr, "bai-blobfuse: %s/%s mounted at %s\n", settings.account.c_str(), settings.container.c_str(),
                     command.mountpoint.c_str());
        const timespec slice{0, 200'000'000};
        while (fs.serving()) {
            siginfo_t info{};
            if (sigtimedwait(&stop_signals, &info, &slice) > 0) break;
        }
        fs.unmount();
        std::fprintf(stderr, "bai-blobfuse: unmounted %s\n", command.mountpoint.c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bai-blobfuse: cannot mount %s/%s at %s: %s\n", settings.account.c_str(),
                     settings.container.c_str(), command.mountpoint.c_str(), e.what());
        return 1;
    }
}
