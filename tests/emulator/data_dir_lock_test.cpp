#include "emulator/daemon/data_dir_lock.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "emulator/daemon/data_dir_access.h"
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

namespace bai::daemon {
namespace {

mode_t mode_of(const std::filesystem::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
}

TEST(DataDirAccess, ANewDirectoryIsItsOwnersAlone) {
    testing::TestDir dir;
    create_private_dir(dir / "a" / "data");
    EXPECT_EQ(mode_of(dir / "a" / "data"), 0700u);
}

TEST(DataDirAccess, OpenModesAreTightenedAndSaid) {
    testing::TestDir dir;
    std::filesystem::create_directories(dir / "tls");
    for (const char* name : {"state.db", "tls/key.pem"}) {
        std::FILE* f = std::fopen((dir / name).c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fclose(f);
        ::chmod((dir / name).c_str(), 0644);
    }
    ::chmod(dir.path().c_str(), 0755);
    ::chmod((dir / "tls").c_str(), 0755);
    std::vector<std::string> changed = restrict_data_dir(dir.path());
    EXPECT_EQ(changed.size(), 4u);
    EXPECT_EQ(mode_of(dir.path()), 0700u);
    EXPECT_EQ(mode_of(dir / "tls"), 0700u);
    EXPECT_EQ(mode_of(dir / "state.db"), 0600u);
    EXPECT_EQ(mode_of(dir / "tls/key.pem"), 0600u);
    EXPECT_TRUE(restrict_data_dir(dir.path()).empty());  // nothing left to say the second time
}

TEST(DataDirAccess, ALinkInTheDirectoryRedirectsNoChmod) {
    testing::TestDir dir;
    testing::TestDir elsewhere;
    std::FILE* f = std::fopen((elsewhere / "victim").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
    ::chmod((elsewhere / "victim").c_str(), 0644);
    std::filesystem::create_symlink(elsewhere / "victim", dir / "state.db");
    restrict_data_dir(dir.path());
    EXPECT_EQ(mode_of(elsewhere / "victim"), 0644u);
}

}  // namespace
}  // namespace bai::daemon
