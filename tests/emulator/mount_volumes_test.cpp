#include "emulator/arm/mount_volumes.h"

#include <gtest/gtest.h>

namespace bai::arm {
namespace {

using nlohmann::json;

TEST(MountVolumes, SharesByUrlOrAccountNameWithTheirModes) {
    json volumes = json::parse(R"({
      "azureFileShares": [
        {"accountName": "acct", "azureFileUrl": "https://acct.file.core.windows.net/data", "relativeMountPath": "afs",
         "fileMode": "0644", "directoryMode": "755"},
        {"azureFileUrl": "http://127.0.0.1:10004/devstoreaccount1/logs", "relativeMountPath": "logs"},
        {"azureFileUrl": "https://other.file.core.windows.net/x", "relativeMountPath": "x", "fileMode": 644},
        {"azureFileUrl": "nonsense", "relativeMountPath": "bad"}
      ],
      "azureBlobFileSystems": [{"accountName": "acct", "containerName": "models", "relativeMountPath": "bfs"}]
    })");
    std::vector<Volume> v = volumes_of(volumes);
    ASSERT_EQ(v.size(), 5u);
    EXPECT_EQ(v[0].account, "acct");
    EXPECT_EQ(v[0].container, "data");
    EXPECT_EQ(v[0].file_mode, 0644u);
    EXPECT_EQ(v[0].directory_mode, 0755u);
    EXPECT_EQ(v[1].account, "devstoreaccount1");  // the emulator's path style
    EXPECT_EQ(v[1].container, "logs");
    EXPECT_EQ(v[1].file_mode, 0777u);
    EXPECT_EQ(v[2].account, "other");
    EXPECT_EQ(v[2].file_mode, 0777u);  // not a string: the default
    EXPECT_TRUE(v[2].invalid.empty());
    // Kept, to fail when mounted (the service accepted it at create).
    EXPECT_EQ(v[3].relative, "bad");
    EXPECT_NE(v[3].invalid.find("\"nonsense\" is not the URL of an Azure Files share"), std::string::npos);
    EXPECT_FALSE(v[3].in_storage());
    EXPECT_TRUE(v[4].blob());
    EXPECT_EQ(v[4].container, "models");
    EXPECT_EQ(v[4].relative, "bfs");
}

}  // namespace
}  // namespace bai::arm
