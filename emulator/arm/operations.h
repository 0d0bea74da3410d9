// Long-running operations: a create, delete or terminate is recorded InProgress, answered 202
// with Azure-AsyncOperation/Location/Retry-After, and completed on a worker thread once the
// configured delay has passed. Operations are rows in SQLite: one still in progress when the
// emulator stopped is completed after the next start.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <httplib.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "common/db/database.h"
#include "common/time/timestamps.h"

namespace bai::arm {

struct Operation {
    std::string id;
    std::string kind;            // "create", "delete", "terminate"
    std::string resource_id;     // the ARM id it acts on
    std::string resource_ref;    // "{sub}${rg}${ws}..." as the service wrote resourceId
    std::string provider;        // "Microsoft.BatchAI", "Microsoft.Resources"
    std::string subscription;
    std::string location;
    std::string api_version;
    std::string status = "InProgress";  // InProgress, Succeeded, Failed
    std::int64_t start_ticks = 0;
    std::int64_t end_ticks = 0;
    nlohmann::json error;  // {"code","message"} when Failed
};

class OperationTracker {
public:
    // Runs the operation's effect, inside the transaction that records it Succeeded; a CloudError
    // (or any exception) rolls the effect back and makes the operation Failed.
    using Completer = std::function<void(const Operation&)>;

    OperationTracker(db::Database& db, std::chrono::milliseconds delay);
    ~OperationTracker();
    static void migrate(db::Database& db);

    // Starts the worker; operations left in progress by a previous run are completed first.
    void start(Completer completer);
    // Joins the worker; operations still in progress complete after the next start.
    void stop();

    // Records `op` (id and times filled in) and schedules its completion.
    Operation begin(Operation op);
    std::optional<Operation> get(const std::string& id) const;
    // Nothing pending and nothing being completed.
    bool idle() const;
    // Waits until idle() or `until`; whether idle.
    bool wait_idle(std::chrono::steady_clock::time_point until) const;
    // Forgets the operations that finished before `cutoff` (their status URLs answer 404 then);
    // how many. The worker does it for those finished kKeepFinished ago, at start and hourly, so
    // that the table does not grow without end.
    size_t forget_finished_before(time::TimePoint cutoff);
    static constexpr std::chrono::hours kKeepFinished{24};

    // The two polling URLs of an operation, after the base URL, without the query.
    static std::string results_path(const Operation& op);
    static std::string statuses_path(const Operation& op);
    // Retry-After on every answer that tells a client to come back (the 202 and each poll while
    // in progress): a client that finds none waits its own default, 30 s in azure-core and
    // msrestazure (README, "Long-running operations").
    static void ask_back(httplib::Response& res);
    // 202 with an empty body and the polling headers.
    static void send_accepted(httplib::Response& res, const Operation& op, const std::string& base_url,
                              bool async_header = true);
    // The operation status document.
    static nlohmann::json document(const Operation& op, const std::string& base_url);

private:
    void run_worker();
    void complete_all(const std::vector<std::string>& ids);
    void complete(const std::string& id);
    void save(const Operation& op);

    db::Database& db_;
    std::chrono::milliseconds delay_;
    Completer completer_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    mutable std::condition_variable idle_cv_;  // notified when the worker has emptied the queue
    using Due = std::pair<std::chrono::steady_clock::time_point, std::string>;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> pending_;  // soonest on top
    bool stopping_ = false;
    bool completing_ = false;
    std::thread worker_;
};

}  // namespace bai::arm
