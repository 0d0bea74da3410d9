// The store's summaries for the portal's lists and counts: filtered by state (ASCII case
// ignored) and by a part of the key, newest first, paged, counted over every page.
#include <gtest/gtest.h>

#include "common/db/database.h"
#include "emulator/arm/resource_store.h"
#include "tests/common/test_dir.h"

namespace bai::arm {
namespace {

class ResourceSummaries : public ::testing::Test {
protected:
    void SetUp() override {
        db_ = db::Database::open(dir_ / "state.db");
        ResourceStore::migrate(*db_);
        store_ = std::make_unique<ResourceStore>(*db_);
        for (int i = 0; i < 7; ++i) {
            const std::string id = "/s/rg/exp/jobs/Job" + std::to_string(i);
            const char* state = i % 3 == 0 ? "succeeded" : i % 3 == 1 ? "Running" : "queued";
            ASSERT_TRUE(store_->create(id, "/s/rg/exp", "job",
                                       {{"id", id}, {"name", "Job" + std::to_string(i)},
                                        {"properties", {{"executionState", state}, {"creationTime", "t" + std::to_string(i)}}}}));
        }
        ASSERT_TRUE(store_->create("/s/rg/other/jobs/x", "/s/rg/other", "job", {{"id", "/s/rg/other/jobs/x"}, {"properties", json::object()}}));
        ASSERT_TRUE(store_->create("/s/rg/exp", "/s/rg", "experiment", {{"properties", {{"provisioningState", "succeeded"}}}}));
    }
    using json = nlohmann::json;
    bai::testing::TestDir dir_;
    std::unique_ptr<db::Database> db_;
    std::unique_ptr<ResourceStore> store_;
};

TEST_F(ResourceSummaries, NewestFirstPagedAndCountedOverEveryPage) {
    SummaryPage page = store_->summaries("job", "$.properties.executionState", "", "", 0, 3);
    EXPECT_EQ(page.total, 8);
    ASSERT_EQ(page.items.size(), 3u);
    EXPECT_EQ(page.items[0].key, "/s/rg/other/jobs/x");
    EXPECT_EQ(page.items[0].state, "");  // no state: empty, not an error
    EXPECT_EQ(page.items[1].id, "/s/rg/exp/jobs/Job6");  // the id as written, the key lower case
    EXPECT_EQ(page.items[1].key, "/s/rg/exp/jobs/job6");
    EXPECT_EQ(page.items[1].name, "Job6");
    EXPECT_EQ(page.items[1].created, "t6");
    EXPECT_GT(page.items[0].seq, page.items[1].seq);
    SummaryPage last = store_->summaries("job", "$.properties.executionState", "", "", 6, 3);
    EXPECT_EQ(last.total, 8);
    ASSERT_EQ(last.items.size(), 2u);
    EXPECT_EQ(last.items[1].name, "Job0");
    EXPECT_EQ(store_->summaries("job", "$.properties.executionState", "", "", 100, 3).items.size(), 0u);
}

TEST_F(ResourceSummaries, FiltersByStateIgnoringCaseAndByAPartOfTheKey) {
    SummaryPage running = store_->summaries("job", "$.properties.executionState", "RUNNING", "", 0, 10);
    EXPECT_EQ(running.total, 2);  // Job1, Job4 (stored as "Running")
    EXPECT_EQ(running.items.at(0).name, "Job4");
    SummaryPage in_exp = store_->summaries("job", "$.properties.executionState", "", "/exp/", 0, 10);
    EXPECT_EQ(in_exp.total, 7);
    SummaryPage both = store_->summaries("job", "$.properties.executionState", "succeeded", "job3", 0, 10);
    ASSERT_EQ(both.total, 1);
    EXPECT_EQ(both.items.at(0).name, "Job3");
    // A filter is a value, never SQL.
    EXPECT_EQ(store_->summaries("job", "$.properties.executionState", "' OR 1=1 --", "", 0, 10).total, 0);
    EXPECT_EQ(store_->summaries("job", "$.properties.executionState", "", "%", 0, 10).total, 0);
}

TEST_F(ResourceSummaries, CountsByTypeAndByState) {
    std::map<std::string, std::int64_t> types;
    for (const auto& [type, count] : store_->count_by_type()) types[type] = count;
    EXPECT_EQ(types, (std::map<std::string, std::int64_t>{{"experiment", 1}, {"job", 8}}));
    std::map<std::string, std::int64_t> states;
    for (const auto& [state, count] : store_->count_by_state("job", "$.properties.executionState")) states[state] = count;
    EXPECT_EQ(states, (std::map<std::string, std::int64_t>{{"", 1}, {"Running", 2}, {"queued", 2}, {"succeeded", 3}}));
}

}  // namespace
}  // namespace bai::arm
