// The writable layer of a job's container on one node, as docker gives one: an overlay whose
// lower layer is the image's root (or the host's) and whose upper layer is the node's
// containers/<job>/upper, so that a job preparation may `apt install` without touching the image.
// Mounted in the emulator's own mount namespace (root only) for the job's run, and unmounted and
// removed after it; the daemon releases what a crash left under DIR/nodes at the next start.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace bai::engine {

class WritableRoot {
public:
    // Mounts the overlay under `dir` (made); nullptr with `why` set when it cannot (not root, a
    // kernel without overlayfs): the sandbox then has the lower root read-only.
    static std::unique_ptr<WritableRoot> mount(const std::filesystem::path& lower, const std::filesystem::path& dir,
                                               std::string& why);
    ~WritableRoot();
    WritableRoot(const WritableRoot&) = delete;
    WritableRoot& operator=(const WritableRoot&) = delete;

    const std::filesystem::path& path() const { return merged_; }

private:
    explicit WritableRoot(std::filesystem::path dir) : dir_(std::move(dir)), merged_(dir_ / "root") {}
    std::filesystem::path dir_;
    std::filesystem::path merged_;
};

// Removes a node's or a job's directory tree: what is mounted in it is unmounted first, so that
// the removal never walks into a writable root (which would whiteout the whole lower root).
void remove_tree(const std::filesystem::path& path, std::error_code& ec);

}  // namespace bai::engine
