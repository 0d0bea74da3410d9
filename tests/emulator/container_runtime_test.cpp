#include "emulator/engine/container_runtime.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace bai::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json with_image(const std::string& image) {
    return {{"containerSettings", {{"imageSourceRegistry", {{"image", image}}}}}};
}

const RuntimeAvailability kBoth{true, "", true, ""};
const RuntimeAvailability kSandboxOnly{false, "no docker engine answers", true, ""};
const RuntimeAvailability kNeither{false, "no docker engine answers", false, "bubblewrap (bwrap) is not installed"};

TEST(ChooseRuntime, NoContainerSettingsRunsOnTheHost) {
    RuntimeDecision d = choose_runtime(json::object(), {}, kBoth);
    EXPECT_EQ(d.kind, RuntimeKind::host);
    EXPECT_TRUE(d.image.empty());
    EXPECT_TRUE(d.error.empty());
}

TEST(ChooseRuntime, AutoPrefersDockerThenTheSandboxThenTheHost) {
    EXPECT_EQ(choose_runtime(with_image("ubuntu:16.04"), {}, kBoth).kind, RuntimeKind::docker);
    RuntimeDecision sandbox = choose_runtime(with_image("ubuntu:16.04"), {}, kSandboxOnly);
    EXPECT_EQ(sandbox.kind, RuntimeKind::sandbox);
    EXPECT_TRUE(sandbox.root.empty());  // the host's root
    EXPECT_NE(sandbox.reason.find("no --image for it"), std::string::npos) << sandbox.reason;
    RuntimeDecision host = choose_runtime(with_image("ubuntu:16.04"), {}, kNeither);
    EXPECT_EQ(host.kind, RuntimeKind::host);
    EXPECT_NE(host.reason.find("bubblewrap (bwrap) is not installed"), std::string::npos) << host.reason;
}

TEST(ChooseRuntime, AnImageDirectoryTakesTheSandboxEvenWithDocker) {
    ContainerOptions options;
    options.images["ubuntu"] = "/images/ubuntu";
    RuntimeDecision d = choose_runtime(with_image("ubuntu:16.04"), options, kBoth);
    EXPECT_EQ(d.kind, RuntimeKind::sandbox);
    EXPECT_EQ(d.root, fs::path("/images/ubuntu"));
}

TEST(ChooseRuntime, StrictImagesRefusesWhatWouldRunWithoutTheImage) {
    ContainerOptions options;
    options.strict_images = true;
    EXPECT_NE(choose_runtime(with_image("a/b:1"), options, kSandboxOnly).error.find("a/b:1"), std::string::npos);
    EXPECT_FALSE(choose_runtime(with_image("a/b:1"), options, kNeither).error.empty());
    EXPECT_TRUE(choose_runtime(with_image("a/b:1"), options, kBoth).error.empty());  // docker pulls it
    options.images["a/b:1"] = "/images/ab";
    EXPECT_TRUE(choose_runtime(with_image("a/b:1"), options, kSandboxOnly).error.empty());
    options.choice = RuntimeChoice::host;
    EXPECT_FALSE(choose_runtime(with_image("a/b:1"), options, kBoth).error.empty());
}

TEST(ChooseRuntime, AForcedRuntimeThatIsMissingFailsTheJob) {
    ContainerOptions options;
    options.choice = RuntimeChoice::docker;
    EXPECT_NE(choose_runtime(with_image("x"), options, kSandboxOnly).error.find("no docker engine"), std::string::npos);
    options.choice = RuntimeChoice::sandbox;
    EXPECT_NE(choose_runtime(with_image("x"), options, kNeither).error.find("bwrap"), std::string::npos);
    EXPECT_EQ(choose_runtime(with_image("x"), options, kBoth).kind, RuntimeKind::sandbox);
    options.choice = RuntimeChoice::host;
    RuntimeDecision host = choose_runtime(with_image("x"), options, kBoth);
    EXPECT_EQ(host.kind, RuntimeKind::host);
    EXPECT_TRUE(host.error.empty());
}

TEST(ImageDirectory, ExactNameThenRepositoryWithoutTag) {
    std::map<std::string, fs::path> images{{"ubuntu", "/u"}, {"tensorflow/tensorflow:1.8.0-gpu", "/tf18"},
                                           {"localhost:5000/img", "/local"}};
    EXPECT_EQ(*image_directory(images, "ubuntu:16.04"), fs::path("/u"));
    EXPECT_EQ(*image_directory(images, "ubuntu"), fs::path("/u"));
    EXPECT_EQ(*image_directory(images, "tensorflow/tensorflow:1.8.0-gpu"), fs::path("/tf18"));
    EXPECT_EQ(image_directory(images, "tensorflow/tensorflow:1.9.0-gpu"), nullptr);
    EXPECT_EQ(*image_directory(images, "localhost:5000/img:2"), fs::path("/local"));
    EXPECT_EQ(image_directory(images, "localhost:5000/other"), nullptr);
}

TEST(ContainerFlags, ParseImageAndRuntime) {
    auto [image, dir] = parse_image_flag("ubuntu:16.04=/tmp");
    EXPECT_EQ(image, "ubuntu:16.04");
    EXPECT_EQ(dir, fs::path("/tmp"));
    EXPECT_THROW(parse_image_flag("ubuntu"), std::invalid_argument);
    EXPECT_THROW(parse_image_flag("=/tmp"), std::invalid_argument);
    EXPECT_THROW(parse_image_flag("ubuntu=/no/such/dir"), std::invalid_argument);
    EXPECT_EQ(parse_runtime_choice("auto"), RuntimeChoice::automatic);
    EXPECT_EQ(parse_runtime_choice("sandbox"), RuntimeChoice::sandbox);
    EXPECT_THROW(parse_runtime_choice("podman"), std::invalid_argument);
}

TEST(ShmSize, DockerSyntaxInBinaryUnits) {
    EXPECT_EQ(parse_shm_size("2g"), 2ULL << 30);
    EXPECT_EQ(parse_shm_size("512m"), 512ULL << 20);
    EXPECT_EQ(parse_shm_size("16gb"), 16ULL << 30);
    EXPECT_EQ(parse_shm_size("1.5 GiB"), 3ULL << 29);
    EXPECT_EQ(parse_shm_size("65536"), 65536u);
    EXPECT_EQ(parse_shm_size("64k"), 65536u);
    EXPECT_EQ(parse_shm_size(""), std::nullopt);
    EXPECT_EQ(parse_shm_size("g"), std::nullopt);
    EXPECT_EQ(parse_shm_size("2x"), std::nullopt);
    EXPECT_EQ(parse_shm_size("1.2.3m"), std::nullopt);
    EXPECT_EQ(parse_shm_size("0"), std::nullopt);
}

// A node's host's docker engine (a Slurm host): asked there once, a failure asked again (after a
// minute), an ask that could not be made not remembered; the sandbox is this machine's answer.
TEST(RuntimeProbe, AHostsDockerEngineIsAskedOnceAndRemembered) {
    RuntimeProbe probe("", "");  // this machine: neither bubblewrap nor docker
    int asked = 0;
    auto answers = [&asked](std::optional<bool> result, std::string text) {
        return [&asked, result, text](std::string& answer) -> std::optional<bool> {
            ++asked;
            answer = text;
            return result;
        };
    };
    RuntimeAvailability a = probe.availability_on("127.77.1.10", answers(true, "20.10.24+dfsg1"));
    EXPECT_TRUE(a.docker);
    EXPECT_EQ(a.docker_version, "20.10.24+dfsg1");
    EXPECT_FALSE(a.sandbox);  // this machine's: no bwrap
    a = probe.availability_on("127.77.1.10", answers(false, "never asked"));
    EXPECT_TRUE(a.docker);
    EXPECT_EQ(asked, 1);
    a = probe.availability_on("127.77.1.11", answers(false, "no docker engine answers"));
    EXPECT_FALSE(a.docker);
    EXPECT_EQ(a.docker_why, "on host 127.77.1.11: no docker engine answers");
    EXPECT_TRUE(a.docker_version.empty());
    a = probe.availability_on("127.77.1.11", answers(true, "asked within the minute"));
    EXPECT_FALSE(a.docker);  // remembered for a minute
    EXPECT_EQ(asked, 2);
    a = probe.availability_on("127.77.1.12", answers(std::nullopt, "cancelled"));
    EXPECT_FALSE(a.docker);
    a = probe.availability_on("127.77.1.12", answers(true, "24.0.5"));
    EXPECT_TRUE(a.docker);  // the cancelled ask was not remembered
    EXPECT_EQ(asked, 4);
}

}  // namespace
}  // namespace bai::engine
