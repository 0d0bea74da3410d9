#include "common/endpoints/user_pointer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/endpoints/endpoints_file.h"
#include "tests/common/test_dir.h"

namespace bai::endpoints {
namespace {

namespace fs = std::filesystem;

// Sets or unsets an environment variable for one test.
class EnvGuard {
public:
    EnvGuard(const char* name, const char* value) : name_(name) {
        if (const char* old = ::getenv(name)) old_ = old;
        value ? ::setenv(name, value, 1) : ::unsetenv(name);
    }
    ~EnvGuard() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(UserPointer, RuntimeDirectoryFirstThenHome) {
    testing::TestDir dir;
    fs::create_directories(dir / "run");
    EnvGuard named("BATCHAI_EMULATOR_POINTER", nullptr);
    EnvGuard runtime("XDG_RUNTIME_DIR", (dir / "run").c_str());
    EnvGuard home("HOME", (dir / "home").c_str());
    EXPECT_EQ(pointer_path(), dir / "run" / "batchai-emulator" / "endpoints.json");
    EXPECT_EQ(pointer_candidates(), (std::vector<fs::path>{dir / "run" / "batchai-emulator" / "endpoints.json",
                                                           dir / "home" / ".batchai" / "endpoints.json"}));
    EnvGuard no_runtime("XDG_RUNTIME_DIR", nullptr);
    EXPECT_EQ(pointer_path(), dir / "home" / ".batchai" / "endpoints.json");
}

TEST(UserPointer, NamedOrOff) {
    EnvGuard named("BATCHAI_EMULATOR_POINTER", "/somewhere/p.json");
    EXPECT_EQ(pointer_path(), fs::path("/somewhere/p.json"));
    EXPECT_EQ(pointer_candidates(), std::vector<fs::path>{"/somewhere/p.json"});
    EnvGuard off("BATCHAI_EMULATOR_POINTER", "off");
    EXPECT_FALSE(pointer_path().has_value());
    EXPECT_TRUE(pointer_candidates().empty());
}

TEST(UserPointer, PublishedPointerReadsAsTheEndpointsFile) {
    testing::TestDir dir;
    write(dir / "endpoints.json", {"https://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3", "/c.pem", 7});
    const fs::path pointer = dir / "home" / ".batchai" / "endpoints.json";
    publish_pointer(pointer, dir / "endpoints.json");
    EXPECT_EQ(fs::status(pointer.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
    auto through = read(pointer);
    ASSERT_TRUE(through.has_value());
    EXPECT_EQ(through->arm, "https://127.0.0.1:1");
    publish_pointer(pointer, dir / "endpoints.json");  // again: replaced, no error
    EXPECT_EQ(fs::read_symlink(pointer), dir / "endpoints.json");
}

TEST(UserPointer, WithdrawnOnlyByItsOwnEmulator) {
    testing::TestDir dir;
    const fs::path pointer = dir / "p.json";
    publish_pointer(pointer, dir / "first" / "endpoints.json");
    publish_pointer(pointer, dir / "second" / "endpoints.json");  // a later emulator's
    withdraw_pointer(pointer, dir / "first" / "endpoints.json");
    EXPECT_EQ(fs::read_symlink(pointer), dir / "second" / "endpoints.json");
    withdraw_pointer(pointer, dir / "second" / "endpoints.json");
    EXPECT_FALSE(fs::is_symlink(pointer));
}

TEST(UserPointer, ProcessAlive) {
    EXPECT_TRUE(process_alive(::getpid()));
    EXPECT_TRUE(process_alive(1));
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    EXPECT_FALSE(process_alive(child));
}

}  // namespace
}  // namespace bai::endpoints
