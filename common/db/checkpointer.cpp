#include "common/db/checkpointer.h"

#include "common/db/database.h"

namespace bai::db {

Checkpointer::Checkpointer(sqlite3* writer, const std::filesystem::path& path)
    : writer_(writer), own_(open_connection(path, SQLITE_OPEN_READWRITE)) {
    sqlite3_wal_hook(writer_, &Checkpointer::on_commit, this);
    thread_ = std::thread([this] { run(); });
}

Checkpointer::~Checkpointer() {
    sqlite3_wal_hook(writer_, nullptr, nullptr);
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    sqlite3_close_v2(own_);
}

long Checkpointer::completed() const {
    std::lock_guard lock(mutex_);
    return completed_;
}

int Checkpointer::on_commit(void* self, sqlite3* db, const char* schema, int pages) {
    auto* me = static_cast<Checkpointer*>(self);
    if (pages >= kInlinePages) {
        sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        return SQLITE_OK;
    }
    // Once per kWakePages of growth: the WAL only restarts at the first write after a complete
    // checkpoint, and every commit until then reports the same large size.
    std::unique_lock lock(me->mutex_);
    if (pages < me->signalled_at_) me->signalled_at_ = 0;
    if (pages < me->signalled_at_ + kWakePages) return SQLITE_OK;
    me->signalled_at_ = pages;
    me->wanted_ = true;
    lock.unlock();
    me->wake_.notify_one();
    return SQLITE_OK;
}

void Checkpointer::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        wake_.wait(lock, [this] { return wanted_ || stopping_; });
        if (stopping_) return;
        wanted_ = false;
        lock.unlock();
        int rc = sqlite3_wal_checkpoint_v2(own_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        lock.lock();
        if (rc == SQLITE_OK) ++completed_;
    }
}

}  // namespace bai::db
