// Faults that scenarios and tests inject into the share mounts: the next K operations on a
// share's mounts fail with an errno (EIO, ENOSPC), or are stalled for N ms first (or both).
// Counted operations read or change a file or the tree: open, read, write, create, mkdir, unlink,
// rmdir, rename, setattr, fsync. Lookups, attributes, listings and closes are never failed, so a
// fault hits what a job's I/O does, not the kernel's bookkeeping around it.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace bai::mounts {

struct FaultPlan {
    int error = 0;       // errno to fail with; 0: only stall
    int operations = 0;  // how many operations remain affected
    std::chrono::milliseconds stall{0};
};

class MountFaults {
public:
    void set(const std::string& account, const std::string& share, const FaultPlan& plan);
    void clear(const std::string& account, const std::string& share);
    std::optional<FaultPlan> get(const std::string& account, const std::string& share);

    // Called by each counted operation of a mount of that share: stalls when asked, and returns
    // the errno the operation must fail with (0: it goes on).
    int next(const std::string& account, const std::string& share);

private:
    std::mutex mutex_;
    std::map<std::pair<std::string, std::string>, FaultPlan> plans_;
};

// "EIO" or "ENOSPC" (the errors a scenario can ask for) to their errno; 0 otherwise.
int fault_errno(const std::string& name);

}  // namespace bai::mounts
