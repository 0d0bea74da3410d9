#include "emulator/daemon/data_dir_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/common/test_dir.h"

namespace bai::daemon {
namespace {

TEST(DataDirLock, SecondHolderIsRefusedWithThePidOfTheFirst) {
    testing::TestDir dir;
    std::string reason;
    auto first = DataDirLock::acquire(dir.path(), reason);
    ASSERT_TRUE(first.has_value()) << reason;
    auto second = DataDirLock::acquire(dir.path(), reason);
    EXPECT_FALSE(second.has_value());
    EXPECT_NE(reason.find("in use"), std::string::npos) << reason;
    EXPECT_NE(reason.find(std::to_string(::getpid())), std::string::npos) << reason;
}

TEST(DataDirLock, IsFreeAgainAfterRelease) {
    testing::TestDir dir;
    std::string reason;
    { auto first = DataDirLock::acquire(dir.path(), reason); }
    EXPECT_TRUE(DataDirLock::acquire(dir.path(), reason).has_value()) << reason;
}

TEST(DataDirLock, ReportsAnUnusableDirectory) {
    std::string reason;
    EXPECT_FALSE(DataDirLock::acquire("/nonexistent-bai-dir", reason).has_value());
    EXPECT_NE(reason.find("cannot open"), std::string::npos) << reason;
}

}  // namespace
}  // namespace bai::daemon
