// How a Batch container task's image is named to docker and with which registry's credentials,
// and how a failed pull is told apart (task_container.h).
#include <gtest/gtest.h>

#include "emulator/batch/task_container.h"

namespace bai::batch {
namespace {

using nlohmann::json;

const json kRegistries = json::array({
    {{"registryServer", "https://myacr.azurecr.io/"}, {"username", "acr-user"}, {"password", "acr-pass"}},
    {{"registryServer", "docker.io"}, {"username", "hub-user"}, {"password", "hub-pass"}},
    {{"registryServer", "localhost:5000"}, {"username", "local-user"}, {"password", "local-pass"}},
});

TEST(BatchImageSource, ThePoolsRegistryForTheImagesServer) {
    engine::ImageSource acr = batch_image_source("MyAcr.azurecr.io/train:2", json(), kRegistries);
    EXPECT_EQ(acr.reference, "MyAcr.azurecr.io/train:2");  // as given: docker pulls what the task names
    EXPECT_EQ(acr.registry, "MyAcr.azurecr.io");  // filed as docker will look it up
    EXPECT_EQ(acr.username, "acr-user");
    EXPECT_EQ(acr.password, "acr-pass");
    for (const char* hub : {"ubuntu:22.04", "library/ubuntu", "tensorflow/tensorflow:2.11.0-gpu"}) {
        engine::ImageSource source = batch_image_source(hub, json(), kRegistries);
        EXPECT_EQ(source.reference, hub);
        EXPECT_EQ(source.registry, "https://index.docker.io/v1/") << hub;
        EXPECT_EQ(source.username, "hub-user") << hub;
    }
    EXPECT_EQ(batch_image_source("localhost:5000/x", json(), kRegistries).username, "local-user");
    const json upper = json::array({{{"registryServer", "HTTPS://MyAcr.azurecr.io/"}, {"username", "u"}, {"password", "p"}}});
    EXPECT_EQ(batch_image_source("myacr.azurecr.io/train:2", json(), upper).username, "u");  // scheme in capitals
    engine::ImageSource unknown = batch_image_source("other.example:443/x", json(), kRegistries);
    EXPECT_EQ(unknown.registry, "other.example:443");
    EXPECT_EQ(unknown.username, "");  // no credentials: docker's own configuration applies
    EXPECT_EQ(batch_image_source("ubuntu", json(), json()).username, "");
    EXPECT_EQ(batch_image_source("ubuntu", json(), json("not a list")).username, "");
}

TEST(BatchImageSource, TheTasksOwnRegistryFirst) {
    const json own{{"registryServer", "myacr.azurecr.io"}, {"username", "task-user"}, {"password", "task-pass"}};
    engine::ImageSource source = batch_image_source("myacr.azurecr.io/train:2", own, kRegistries);
    EXPECT_EQ(source.username, "task-user");
    EXPECT_EQ(source.password, "task-pass");
    // One without a user name (an identity reference) gives none: the pool's apply.
    EXPECT_EQ(batch_image_source("myacr.azurecr.io/train:2", json{{"registryServer", "myacr.azurecr.io"}}, kRegistries).username,
              "acr-user");
}

TEST(PullFailureCode, RegistryOrImage) {
    EXPECT_EQ(pull_failure_code("Error response from daemon: Head \"http://127.0.0.1:5000/v2/x/manifests/1\": no basic auth credentials"),
              "ContainerInvalidRegistry");
    EXPECT_EQ(pull_failure_code("Error response from daemon: unauthorized: authentication required"), "ContainerInvalidRegistry");
    EXPECT_EQ(pull_failure_code("Error response from daemon: Get \"https://r.example/v2/\": dial tcp: lookup r.example: no such host"),
              "ContainerInvalidRegistry");
    EXPECT_EQ(pull_failure_code("Error response from daemon: manifest for 127.0.0.1:5000/bai/missing:1 not found: manifest unknown"),
              "ContainerInvalidImage");
    EXPECT_EQ(pull_failure_code("invalid reference format"), "ContainerInvalidImage");
}

}  // namespace
}  // namespace bai::batch
