#include "emulator/arm/operations.h"

#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "common/time/timestamps.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_view.h"

namespace bai::arm {
namespace {

constexpr size_t kBatch = 64;  // bounds how long one batch holds the database

constexpr db::Migration kOperationMigrations[] = {
    {1, R"sql(
CREATE TABLE arm_operations(
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  resource_ref TEXT NOT NULL,
  provider TEXT NOT NULL,
  subscription TEXT NOT NULL,
  location TEXT NOT NULL,
  api_version TEXT NOT NULL,
  status TEXT NOT NULL,
  start_ticks INTEGER NOT NULL,
  end_ticks INTEGER NOT NULL,
  error TEXT NOT NULL
);
)sql"},
    // Keyed by id alone: one b-tree to write per operation instead of a table and its index.
    {2, R"sql(
CREATE TABLE arm_operations_v2(
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  resource_ref TEXT NOT NULL,
  provider TEXT NOT NULL,
  subscription TEXT NOT NULL,
  location TEXT NOT NULL,
  api_version TEXT NOT NULL,
  status TEXT NOT NULL,
  start_ticks INTEGER NOT NULL,
  end_ticks INTEGER NOT NULL,
  error TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO arm_operations_v2 SELECT id, kind, resource_id, resource_ref, provider, subscription, location,
  api_version, status, start_ticks, end_ticks, error FROM arm_operations;
DROP TABLE arm_operations;
ALTER TABLE arm_operations_v2 RENAME TO arm_operations;
)sql"},
};

constexpr const char* kOperationColumns =
    "id, kind, resource_id, resource_ref, provider, subscription, location, api_version, status, "
    "start_ticks, end_ticks, error";

Operation read_operation(db::Statement& s) {
    Operation op;
    op.id = s.column_text(0);
    op.kind = s.column_text(1);
    op.resource_id = s.column_text(2);
    op.resource_ref = s.column_text(3);
    op.provider = s.column_text(4);
    op.subscription = s.column_text(5);
    op.location = s.column_text(6);
    op.api_version = s.column_text(7);
    op.status = s.column_text(8);
    op.start_ticks = s.column_int(9);
    op.end_ticks = s.column_int(10);
    std::string error = s.column_text(11);
    if (!error.empty()) op.error = nlohmann::json::parse(error);
    return op;
}

std::string prefix(const Operation& op) {
    return "/subscriptions/" + op.subscription + "/providers/" + op.provider + "/locations/" + op.location;
}

}  // namespace

OperationTracker::OperationTracker(db::Database& db, std::chrono::milliseconds delay) : db_(db), delay_(delay) {}

OperationTracker::~OperationTracker() { stop(); }

void OperationTracker::migrate(db::Database& db) {
    // The ARM component's migrations are shared between the resource store (1) and this (2).
    db.migrate("arm_operations", kOperationMigrations);
}

void OperationTracker::save(const Operation& op) {
    db_.transaction([&](db::Database& db) {
        auto s = db.prepare(std::string("INSERT OR REPLACE INTO arm_operations(") + kOperationColumns +
                            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        s.bind(1, op.id).bind(2, op.kind).bind(3, op.resource_id).bind(4, op.resource_ref).bind(5, op.provider);
        s.bind(6, op.subscription).bind(7, op.location).bind(8, op.api_version).bind(9, op.status);
        s.bind(10, op.start_ticks).bind(11, op.end_ticks).bind(12, op.error.is_null() ? "" : op.error.dump());
        s.run();
    });
}

size_t OperationTracker::forget_finished_before(time::TimePoint cutoff) {
    size_t forgotten = 0;
    const std::string finished = " FROM arm_operations WHERE status != 'InProgress' AND end_ticks < ?";
    db_.transaction([&](db::Database& db) {
        auto count = db.prepare("SELECT COUNT(*)" + finished);
        count.bind(1, time::to_ticks(cutoff));
        if (count.step()) forgotten = static_cast<size_t>(count.column_int(0));
        if (forgotten == 0) return;
        auto remove = db.prepare("DELETE" + finished);
        remove.bind(1, time::to_ticks(cutoff));
        remove.run();
    });
    return forgotten;
}

void OperationTracker::start(Completer completer) {
    completer_ = std::move(completer);
    forget_finished_before(time::now() - kKeepFinished);
    std::vector<std::string> left;
    db_.read([&](db::Database& db) {
        auto s = db.prepare("SELECT id FROM arm_operations WHERE status = 'InProgress' ORDER BY start_ticks");
        while (s.step()) left.push_back(s.column_text(0));
    });
    {
        std::lock_guard lock(mutex_);
        auto now = std::chrono::steady_clock::now();
        for (std::string& id : left) pending_.emplace(now, std::move(id));
        stopping_ = false;
    }
    worker_ = std::thread([this] { run_worker(); });
}

void OperationTracker::stop() {
    {
        std::lock_guard lock(mutex_);
        if (!worker_.joinable()) return;
        stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
}

Operation OperationTracker::begin(Operation op) {
    op.id = crypto::uuid4();
    op.status = "InProgress";
    op.start_ticks = time::to_ticks(time::now());
    save(op);
    bool soonest = false;
    {
        std::lock_guard lock(mutex_);
        pending_.emplace(std::chrono::steady_clock::now() + delay_, op.id);
        soonest = pending_.top().second == op.id;
    }
    // The worker sleeps until the soonest due time: only a new soonest one needs to wake it.
    if (soonest) wake_.notify_all();
    return op;
}

std::optional<Operation> OperationTracker::get(const std::string& id) const {
    std::optional<Operation> found;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kOperationColumns + " FROM arm_operations WHERE id = ?");
        s.bind(1, id);
        if (s.step()) found = read_operation(s);
    });
    return found;
}

bool OperationTracker::idle() const {
    std::lock_guard lock(mutex_);
    return pending_.empty() && !completing_;
}

bool OperationTracker::wait_idle(std::chrono::steady_clock::time_point until) const {
    std::unique_lock lock(mutex_);
    return idle_cv_.wait_until(lock, until, [this] { return pending_.empty() && !completing_; });
}

void OperationTracker::run_worker() {
    std::unique_lock lock(mutex_);
    auto next_forget = std::chrono::steady_clock::now() + std::chrono::hours(1);
    while (true) {
        if (stopping_) return;
        if (std::chrono::steady_clock::now() >= next_forget) {
            next_forget = std::chrono::steady_clock::now() + std::chrono::hours(1);
            lock.unlock();
            try {
                forget_finished_before(time::now() - kKeepFinished);
            } catch (const std::exception& e) {
                log::error(std::string("forgetting finished operations failed: ") + e.what());
            }
            lock.lock();
            continue;
        }
        if (pending_.empty()) {
            wake_.wait_until(lock, next_forget);
            continue;
        }
        if (pending_.top().first > std::chrono::steady_clock::now()) {
            // A copy: wait_until reads its deadline again while the lock is released, when a
            // begin() may grow the queue and move (free) what top() referred to.
            const auto due = pending_.top().first;
            wake_.wait_until(lock, due);
            continue;
        }
        std::vector<std::string> due;
        const auto now = std::chrono::steady_clock::now();
        while (!pending_.empty() && pending_.top().first <= now && due.size() < kBatch) {
            due.push_back(pending_.top().second);
            pending_.pop();
        }
        completing_ = true;
        lock.unlock();
        complete_all(due);
        lock.lock();
        completing_ = false;
        if (pending_.empty()) idle_cv_.notify_all();
    }
}

void OperationTracker::complete_all(const std::vector<std::string>& ids) {
    // One commit for the batch: under load many operations fall due together, and a commit
    // (a WAL append) costs more than completing one. Each runs in a savepoint of its own.
    try {
        db_.transaction([&](db::Database&) {
            for (const std::string& id : ids) complete(id);
        });
    } catch (const std::exception& e) {
        log::error(std::string("completing operations failed, retrying in a second: ") + e.what());
        const auto retry_at = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        std::lock_guard lock(mutex_);
        for (const std::string& id : ids) pending_.emplace(retry_at, id);
    }
}

void OperationTracker::complete(const std::string& id) {
    std::optional<Operation> op = get(id);
    if (!op || op->status != "InProgress") return;
    auto finish = [&](const char* status) {
        op->status = status;
        op->end_ticks = time::to_ticks(time::now());
        save(*op);
    };
    try {
        // The effect and the Succeeded record commit together; a failure leaves neither.
        db_.savepoint([&](db::Database&) {
            completer_(*op);
            finish("Succeeded");
        });
        return;
    } catch (const CloudError& e) {
        op->error = e.body()["error"];
    } catch (const std::exception& e) {
        log::error("operation " + id + " (" + op->kind + " " + op->resource_id + ") failed: " + e.what());
        op->error = {{"code", "InternalServerError"}, {"message", e.what()}};
    }
    finish("Failed");
}

std::string OperationTracker::results_path(const Operation& op) { return prefix(op) + "/operationresults/" + op.id; }

std::string OperationTracker::statuses_path(const Operation& op) { return prefix(op) + "/operationstatuses/" + op.id; }

void OperationTracker::ask_back(httplib::Response& res) {
    // Whole seconds (RFC 9110's delay-seconds); 1 is the least a client honours, since azure-core
    // and msrest treat 0 as absent. The default --lro-delay (500 ms) is over by the first poll.
    res.set_header("Retry-After", "1");
}

void OperationTracker::send_accepted(httplib::Response& res, const Operation& op, const std::string& base_url,
                                     bool async_header) {
    const std::string query = "?api-version=" + op.api_version;
    if (async_header) res.set_header("Azure-AsyncOperation", base_url + results_path(op) + query);
    res.set_header("Location", base_url + statuses_path(op) + query);
    ask_back(res);
    res.status = 202;
    res.body.clear();  // no body and, as recorded, no Content-Type
}

nlohmann::json OperationTracker::document(const Operation& op, const std::string& base_url) {
    nlohmann::json doc{{"id", base_url + results_path(op)},
                       {"name", op.id},
                       {"status", op.status},
                       {"startTime", arm_time(time::from_ticks(op.start_ticks))}};
    if (op.status != "InProgress") {
        doc["endTime"] = arm_time(time::from_ticks(op.end_ticks));
        if (op.status == "Succeeded" && !op.resource_ref.empty()) {
            doc["properties"] = {{"resourceId", op.resource_ref}};
        }
        if (!op.error.is_null()) doc["error"] = op.error;
    }
    return doc;
}

}  // namespace bai::arm
