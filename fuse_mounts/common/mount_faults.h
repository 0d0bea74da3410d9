// Faults that scenarios and tests inject into the mounts of a file share or a blob container: the
// next K operations on its mounts fail with an errno (EIO, ENOSPC), or are stalled for N ms first (or both).
// Counted operations read or change a file or the tree: open, read, write, create, mkdir, unlink,
// rmdir, rename, setattr, fsync. Lookups, attributes, listings and closes are never failed, so a
// fault hits what a job's I/O does, not the kernel's bookkeeping around it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace bai::mounts {

// What a plan is for: a file share's mounts or a blob container's (an account may have both of
// one name).
enum class VolumeKind { share, container };

struct FaultPlan {
    int error = 0;       // errno to fail with; 0: only stall
    int operations = 0;  // how many operations remain affected
    std::chrono::milliseconds stall{0};
};

class MountFaults {
public:
    void set(VolumeKind kind, const std::string& account, const std::string& name, const FaultPlan& plan);
    void clear(VolumeKind kind, const std::string& account, const std::string& name);
    std::optional<FaultPlan> get(VolumeKind kind, const std::string& account, const std::string& name);

    // Called by each counted operation of a mount of that volume: stalls when asked, and returns
    // the errno the operation must fail with (0: it goes on).
    int next(VolumeKind kind, const std::string& account, const std::string& name);

    // What an operation on a volume without a plan of its own asks (a storage service's outage,
    // counted with its REST requests): the errno to fail with, 0 to go on.
    void set_fallback(std::function<int(VolumeKind)> fallback);

private:
    std::mutex mutex_;
    std::map<std::tuple<VolumeKind, std::string, std::string>, FaultPlan> plans_;
    std::function<int(VolumeKind)> fallback_;
};

// "EIO" or "ENOSPC" (the errors a scenario can ask for) to their errno; 0 otherwise.
int fault_errno(const std::string& name);

}  // namespace bai::mounts
