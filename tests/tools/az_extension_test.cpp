#include "tools/bai/az_extension.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "tests/common/test_dir.h"

namespace bai::cli {
namespace {

std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Sets an environment variable for one test, restoring what it was.
class ScopedVariable {
public:
    ScopedVariable(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedVariable() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(AzExtension, InstallsWhereAzLooksRecordsThisBaiAndDropsAzsCommandIndex) {
    bai::testing::TestDir dir;
    ScopedVariable config("AZURE_CONFIG_DIR", (dir / "az").string());
    ScopedVariable none("AZURE_EXTENSION_DIR", "");
    std::filesystem::create_directories(dir / "az");
    std::ofstream(dir / "az" / "commandIndex.json") << "{}";
    std::filesystem::create_directories(dir / "az/cliextensions/batchai-flat/stale");  // an older copy

    EXPECT_EQ(install_az_extension(), (dir / "az/cliextensions/batchai-flat").string());
    const auto ext = dir / "az/cliextensions/batchai-flat";
    // What az needs to find and load it: a *.dist-info named after it and one azext_ package.
    EXPECT_NE(read(ext / "batchai_flat-1.0.0.dist-info/METADATA").find("Name: batchai-flat"), std::string::npos);
    EXPECT_NE(read(ext / "azext_batchai_flat/__init__.py").find("COMMAND_LOADER_CLS"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(read(ext / "azext_batchai_flat/installed.json"))["bai"],
              std::filesystem::read_symlink("/proc/self/exe").string());
    EXPECT_FALSE(std::filesystem::exists(ext / "stale"));
    EXPECT_FALSE(std::filesystem::exists(dir / "az" / "commandIndex.json"));
}

TEST(AzExtension, AzureExtensionDirWins) {
    bai::testing::TestDir dir;
    ScopedVariable config("AZURE_CONFIG_DIR", (dir / "az").string());
    ScopedVariable custom("AZURE_EXTENSION_DIR", (dir / "extensions").string());
    EXPECT_EQ(install_az_extension(), (dir / "extensions/batchai-flat").string());
    EXPECT_TRUE(std::filesystem::exists(dir / "extensions/batchai-flat/azext_batchai_flat/azext_metadata.json"));
    EXPECT_FALSE(std::filesystem::exists(dir / "az/cliextensions"));
}

}  // namespace
}  // namespace bai::cli
