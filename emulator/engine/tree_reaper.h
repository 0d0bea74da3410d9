// Removes directory trees on a thread of its own, so that the engine's thread does not wait while
// a node's directory (with the files of every job that ran there) goes: each tree is first
// renamed into the reaper's own directory (at once: a new node or job directory at the same path
// never meets its remains, and nothing that lists the nodes sees it), then removed there.
// remove_tree's rule holds: a tree with something still mounted in it is not walked into.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

namespace bai::engine {

class TreeReaper {
public:
    // `graveyard`: where trees wait for their removal; on the same file system as what is
    // given to remove() (renamed, not copied), made when first needed.
    explicit TreeReaper(std::filesystem::path graveyard) : graveyard_(std::move(graveyard)) {}
    ~TreeReaper();  // removes what is queued, then stops
    TreeReaper(const TreeReaper&) = delete;
    TreeReaper& operator=(const TreeReaper&) = delete;

    // `path` goes: renamed now and removed soon after, or removed now (remove_tree) where it
    // cannot be renamed.
    void remove(const std::filesystem::path& path);
    // Returns once every tree given so far is gone.
    void drain();

private:
    void run();

    std::filesystem::path graveyard_;
    std::mutex mutex_;
    std::condition_variable work_;
    std::condition_variable idle_;
    std::deque<std::filesystem::path> queue_;
    bool busy_ = false;
    bool stopping_ = false;
    std::uint64_t next_ = 0;
    std::thread thread_;
};

}  // namespace bai::engine
