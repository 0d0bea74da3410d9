#include "emulator/batch/entity_store.h"

#include <gtest/gtest.h>

#include "emulator/batch/task_states.h"
#include "tests/common/test_dir.h"

namespace bai::batch {
namespace {

using nlohmann::json;

json task(const std::string& id, const std::string& state, const std::string& result = "", int slots = 1) {
    json doc{{"id", id}, {"state", state}, {"requiredSlots", slots}};
    if (!result.empty()) doc["executionInfo"]["result"] = result;
    return doc;
}

struct Store {
    bai::testing::TestDir dir;
    std::unique_ptr<db::Database> db;
    std::unique_ptr<EntityStore> store;
    Store() { open(); }
    void open() {
        store.reset();
        db.reset();
        db = db::Database::open(dir / "state.db");
        EntityStore::migrate(*db);
        store = std::make_unique<EntityStore>(*db);
    }
    // What a count of the stored documents says (count_tasks, the reference).
    json counted(const std::string& job) {
        std::vector<json> tasks;
        for (const StoredEntity& t : store->in_scope("acct", tasks_of(job))) tasks.push_back(t.body);
        return count_tasks(tasks);
    }
};

TEST(TaskTally, CountsStatesResultsAndSlots) {
    TaskTally tally;
    tally.count(task("a", "active"));
    tally.count(task("b", "running", "", 3));
    tally.count(task("c", "preparing"));
    tally.count(task("d", "completed", "success", 2));
    tally.count(task("e", "completed", "failure"));
    tally.count(json::object());                                   // no state: active
    tally.count({{"state", 7}, {"requiredSlots", "many"}});        // nonsense: counted, never thrown
    EXPECT_EQ(tally.to_json()["taskCounts"], (json{{"active", 3}, {"running", 2}, {"completed", 2}, {"succeeded", 1}, {"failed", 1}}));
    EXPECT_EQ(tally.to_json()["taskSlotCounts"], (json{{"active", 3}, {"running", 4}, {"completed", 3}, {"succeeded", 2}, {"failed", 1}}));
    EXPECT_FALSE(tally.all_completed());
    tally.count(task("b", "running", "", 3), -1);
    tally.count(task("b", "completed", "success", 3));
    EXPECT_EQ(tally.tasks[TaskTally::kRunning], 1);
    EXPECT_EQ(tally.slots[TaskTally::kSucceeded], 5);
}

TEST(TaskTally, AllCompletedNeedsAtLeastOneTask) {
    TaskTally tally;
    EXPECT_FALSE(tally.all_completed());
    tally.count(task("a", "completed", "failure"));
    EXPECT_TRUE(tally.all_completed());
}

TEST(EntityStore, KeepsEachJobsTallyAsItsTasksAreWritten) {
    Store s;
    ASSERT_TRUE(s.store->add("acct", kJobs, {{"id", "Job"}}));
    EXPECT_TRUE(s.store->task_tally("acct", "job").empty());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(s.store->add("acct", tasks_of("Job"), task("t" + std::to_string(i), "active", "", i + 1)));
    EXPECT_FALSE(s.store->add("acct", tasks_of("job"), task("T0", "active")));  // a duplicate counts nothing
    s.store->update("acct", tasks_of("job"), "t1", [](json& doc) { doc["state"] = "running"; return true; });
    s.store->update("acct", tasks_of("job"), "t2", [](json& doc) {
        doc["state"] = "completed";
        doc["executionInfo"]["result"] = "failure";
        return true;
    });
    s.store->update("acct", tasks_of("job"), "t3", [](json& doc) { doc["state"] = "completed"; return false; });  // left as it was
    EXPECT_THROW(s.store->update("acct", tasks_of("job"), "t4", [](json& doc) {
        doc["state"] = "completed";
        throw std::runtime_error("refused");
        return true;
    }), std::runtime_error);
    s.store->remove("acct", tasks_of("job"), "t0");
    EXPECT_EQ(s.store->task_tally("acct", "JOB").to_json(), s.counted("job"));
    EXPECT_EQ(s.store->task_tally("acct", "job").tasks[TaskTally::kActive], 2) << s.counted("job");
    // Another account's job of the same name is another tally.
    EXPECT_TRUE(s.store->task_tally("other", "job").empty());
}

TEST(EntityStore, CountsTheStoredTasksAfterARestartAndForgetsADeletedJob) {
    Store s;
    ASSERT_TRUE(s.store->add("acct", kJobs, {{"id", "job"}}));
    for (int i = 0; i < 2500; ++i) {  // more than one page of documents
        s.store->add("acct", tasks_of("job"), task("t" + std::to_string(i), i % 3 == 0 ? "completed" : "active", "success"));
    }
    const json before = s.store->task_tally("acct", "job").to_json();
    s.open();
    EXPECT_EQ(s.store->task_tally("acct", "job").to_json(), before);
    EXPECT_EQ(before, s.counted("job"));
    EXPECT_EQ(before["taskCounts"]["completed"], 834);
    s.store->add("acct", tasks_of("job"), task("late", "running"));
    EXPECT_EQ(s.store->task_tally("acct", "job").tasks[TaskTally::kRunning], 1);
    s.store->remove_scope("acct", tasks_of("job"));
    EXPECT_TRUE(s.store->task_tally("acct", "job").empty());
    s.store->add("acct", tasks_of("job"), task("again", "active"));
    s.store->remove("acct", kJobs, "job");
    EXPECT_TRUE(s.store->task_tally("acct", "job").empty());
}

}  // namespace
}  // namespace bai::batch
