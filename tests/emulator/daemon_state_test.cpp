#include "emulator/daemon/daemon_state.h"

#include <gtest/gtest.h>

#include "tests/common/test_dir.h"

namespace bai::daemon {
namespace {

TEST(DaemonState, TellsWhetherThePreviousRunStoppedCleanly) {
    testing::TestDir dir;
    auto db = db::Database::open(dir / "state.db");
    migrate_daemon_schema(*db);
    EXPECT_FALSE(last_run(*db).has_value());

    long first = record_start(*db, 100, "0.1.0");
    ASSERT_TRUE(last_run(*db).has_value());
    EXPECT_FALSE(last_run(*db)->stopped_cleanly);  // as after a kill -9
    EXPECT_EQ(last_run(*db)->pid, 100);

    record_stop(*db, first);
    EXPECT_TRUE(last_run(*db)->stopped_cleanly);

    record_start(*db, 200, "0.1.0");
    EXPECT_EQ(last_run(*db)->pid, 200);
    EXPECT_FALSE(last_run(*db)->stopped_cleanly);
}

}  // namespace
}  // namespace bai::daemon
