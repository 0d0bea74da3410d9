// Moves the cost of WAL checkpoints off the writers' path. SQLite's automatic checkpoint runs
// inside the commit that crosses its threshold, on the connection every request shares: that
// commit then waits for the WAL's fsync and the copy of every page into the database (10-20 ms
// per 4 MB here). Instead a commit only notes the WAL's size, and a thread of this class
// checkpoints PASSIVE on a connection of its own, which writers and readers do not wait for.
// Under a steady stream of writes such a checkpoint never quite catches up (frames keep being
// appended while it copies), and the WAL only starts over once every frame is copied; so at
// kInlinePages the commit checkpoints itself, copying just the frames the thread has not yet.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

namespace bai::db {

class Checkpointer {
public:
    // Pages of WAL (4 KiB each) that wake the thread, and that make a commit checkpoint inline.
    static constexpr int kWakePages = 1000;
    static constexpr int kInlinePages = 16000;

    // Hooks `writer` (a connection in WAL mode, not in exclusive locking mode) and opens a
    // connection of its own to `path`.
    Checkpointer(sqlite3* writer, const std::filesystem::path& path);
    // Joins the thread and closes its connection; the writer's hook is removed.
    ~Checkpointer();
    Checkpointer(const Checkpointer&) = delete;
    Checkpointer& operator=(const Checkpointer&) = delete;

    // Checkpoints completed by the thread so far (tests).
    long completed() const;

private:
    static int on_commit(void* self, sqlite3* db, const char* schema, int pages);
    void run();

    sqlite3* writer_;
    sqlite3* own_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool wanted_ = false;
    int signalled_at_ = 0;  // WAL pages when the thread was last woken
    bool stopping_ = false;
    long completed_ = 0;
    std::thread thread_;
};

}  // namespace bai::db
