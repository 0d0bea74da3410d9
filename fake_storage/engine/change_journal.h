// The recent changes of a store's shares or containers, numbered, for mounts in other processes
// (a blob container mounted over the REST API on another host) to invalidate their kernels'
// caches as the mounts in the emulator do from StoreChanges. A reader asks for what changed after
// the number it last got, waiting a while when nothing did; when it asks for more than is kept,
// or for numbers of another run of the emulator (another epoch), it is told to forget everything.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fake_storage/engine/store_changes.h"

namespace bai::storage {

class ChangeJournal {
public:
    explicit ChangeJournal(StoreChanges& changes, std::size_t capacity = 10000);
    ~ChangeJournal();
    ChangeJournal(const ChangeJournal&) = delete;
    ChangeJournal& operator=(const ChangeJournal&) = delete;

    struct Read {
        std::string epoch;
        std::uint64_t next = 0;          // what to ask after next time
        bool everything = false;         // forget all of the volume: the changes asked for are not all kept
        std::vector<std::string> paths;  // in order of change, each once; "" stands for the whole volume
    };
    // The changes of `account`'s `volume` numbered after `since` in `epoch`. With no `since` (a
    // first read), none: only where to start. Waits up to `wait` for one when there is none.
    Read read(const std::string& account, const std::string& volume, const std::string& epoch,
              std::optional<std::uint64_t> since, std::chrono::milliseconds wait);
    // Wakes every waiting reader; later reads do not wait (the endpoint is closing).
    void close();
    const std::string& epoch() const { return epoch_; }

private:
    struct Change {
        std::uint64_t number;
        std::string account;
        std::string volume;
        std::string path;
    };
    void record(const StoreChange& change);
    // What of the journal concerns the reader, under mutex_.
    bool collect(const std::string& account, const std::string& volume, std::uint64_t since, Read& read) const;

    StoreChanges& changes_;
    const std::size_t capacity_;
    const std::string epoch_;
    std::uint64_t subscription_ = 0;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Change> kept_;
    std::uint64_t last_ = 0;
    bool closed_ = false;
};

}  // namespace bai::storage
