// The Batch service's entities of every account (pools, jobs, tasks), as the documents the
// service returns, kept by the ARM resource store (arm_resources in state.db) under ids of their
// own ("batch/ACCOUNT/SCOPE/ID", types batch-pool, batch-job, batch-task, batch-certificate,
// batch-jobschedule, batch-usage). An entity lives in a scope: "pools", "jobs", "certificates",
// "jobschedules", "usage", or "jobs/JOB/tasks" (JOB lower-cased); ids are unique in their scope
// without regard to case and keep the case they were added with.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/db/database.h"
#include "emulator/arm/resource_store.h"
#include "emulator/batch/task_tally.h"

namespace bai::batch {

struct StoredEntity {
    std::string account;
    nlohmann::json body;  // as GET answers it, without the url and odata fields
    std::string etag;     // "0x8D..." (Batch sends it without quotes)
    std::int64_t modified_ticks = 0;
};

inline constexpr const char* kPools = "pools";
inline constexpr const char* kJobs = "jobs";
inline constexpr const char* kCertificates = "certificates";
inline constexpr const char* kJobSchedules = "jobschedules";
// The account's usage record (usage_stats.h): one entity of this id in the scope of this name.
inline constexpr const char* kUsage = "usage";
// The scope of a job's tasks.
std::string tasks_of(const std::string& job_id);

class EntityStore {
public:
    explicit EntityStore(db::Database& db) : resources_(db) {}
    static void migrate(db::Database& db) { arm::ResourceStore::migrate(db); }

    // False (nothing written) when the scope has an entity of that id.
    bool add(const std::string& account, const std::string& scope, const nlohmann::json& body);
    std::optional<StoredEntity> get(const std::string& account, const std::string& scope, const std::string& id) const;
    // Read-modify-write in one transaction; `change` returns false to leave it as it was.
    std::optional<StoredEntity> update(const std::string& account, const std::string& scope, const std::string& id,
                                       const std::function<bool(nlohmann::json&)>& change);
    bool remove(const std::string& account, const std::string& scope, const std::string& id);
    // Removes every entity of the scope (a job's tasks).
    void remove_scope(const std::string& account, const std::string& scope);
    // In the order of their ids (without regard to case, as the service lists them), after the
    // id `after_id` ("" from the first), at most `limit`; the (lower-cased) id to continue after
    // when there is more.
    std::vector<StoredEntity> list(const std::string& account, const std::string& scope, const std::string& after_id,
                                   int limit, std::optional<std::string>& next_after) const;
    // Every entity of the account's scope (a job's tasks), in the order added (the order tasks
    // are scheduled in).
    std::vector<StoredEntity> in_scope(const std::string& account, const std::string& scope) const;
    // Calls `f` with every entity of the account's scope in the order added, reading them a page
    // at a time (a job may have 100,000 tasks).
    void for_each_in_scope(const std::string& account, const std::string& scope, const std::function<void(StoredEntity&)>& f) const;
    // Every entity of the scope in every account, in the order added.
    std::vector<StoredEntity> all(const std::string& scope) const;
    // How many of the job's tasks are in each state: kept as its tasks are added, written and
    // removed, counted from the stored tasks (a page at a time) the first time it is asked for
    // after a start.
    TaskTally task_tally(const std::string& account, const std::string& job_id);
    // The stored document of an ARM resource (a virtual network a pool names), or nullopt.
    std::optional<nlohmann::json> arm_document(const std::string& id) const {
        std::optional<arm::StoredResource> r = resources_.get(id);
        return r ? std::optional<nlohmann::json>(std::move(r->body)) : std::nullopt;
    }

private:
    // Held across every write of a task, so that a tally counted from the stored tasks and the
    // writes that change it take turns.
    std::mutex tally_mutex_;
    std::map<std::string, TaskTally> tallies_;  // by "ACCOUNT/jobs/JOB/tasks", the jobs counted
    arm::ResourceStore resources_;
};

}  // namespace bai::batch
