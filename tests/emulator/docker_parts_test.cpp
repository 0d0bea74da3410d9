// The docker runtime's pure parts: the run command (docker_client.h) and the image a job's
// imageSourceRegistry names, with its credentials (image_pull.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "common/crypto/base64.h"
#include "emulator/engine/docker_client.h"
#include "emulator/engine/image_pull.h"

namespace bai::engine {
namespace {

using nlohmann::json;

std::string after(const std::vector<std::string>& argv, const std::string& flag) {
    auto it = std::find(argv.begin(), argv.end(), flag);
    return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(DockerRun, NamesLabelsBindsGpusAndPassesVariablesByName) {
    DockerRun run;
    run.name = "bai-job-1";
    run.image = "127.0.0.1:5000/bai/train:1";
    run.binds = {{"/data/nodes/n/jobs/j", "/mnt/batch/tasks/shared/LS_root/jobs/j", false},
                 {"/data/agent", "/agent", true}};
    run.gpus = {"GPU-a", "GPU-b"};
    run.shm_bytes = 1 << 20;
    run.cwd = "/mnt/batch/tasks/shared/LS_root/jobs/j";
    run.variables = {"SECRET_VAR"};
    run.owner = "/data/nodes";
    const std::vector<std::string> argv = docker_run_command("/usr/bin/docker", run, {"/bin/bash", "-c", "true"});
    EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + 3), (std::vector<std::string>{"/usr/bin/docker", "run", "--rm"}));
    EXPECT_EQ(after(argv, "--name"), "bai-job-1");
    EXPECT_EQ(after(argv, "--network"), "host");
    EXPECT_EQ(after(argv, "--label"), "bai-emulator.owner=/data/nodes");
    EXPECT_EQ(after(argv, "--gpus"), "\"device=GPU-a,GPU-b\"");  // one CSV value
    EXPECT_EQ(after(argv, "--shm-size"), "1048576");
    EXPECT_EQ(after(argv, "--workdir"), "/mnt/batch/tasks/shared/LS_root/jobs/j");
    EXPECT_EQ(after(argv, "--env"), "SECRET_VAR");  // the name only: the value stays in the environment
    EXPECT_NE(std::find(argv.begin(), argv.end(), "/data/agent:/agent:ro"), argv.end());
    EXPECT_EQ(std::vector<std::string>(argv.end() - 4, argv.end()),
              (std::vector<std::string>{"127.0.0.1:5000/bai/train:1", "/bin/bash", "-c", "true"}));
    run.allocation = "4711";  // on a node's host: what holds the node there
    const std::vector<std::string> hosted = docker_run_command("docker", run, {});
    EXPECT_NE(std::find(hosted.begin(), hosted.end(), "bai-emulator.allocation=4711"), hosted.end());
    run.allocation.clear();
    run.gpus.clear();
    run.owner.clear();
    const std::vector<std::string> plain = docker_run_command("docker", run, {});
    EXPECT_EQ(std::count(plain.begin(), plain.end(), "--gpus"), 0);
    EXPECT_EQ(std::count(plain.begin(), plain.end(), "--label"), 0);
    EXPECT_EQ(std::count(plain.begin(), plain.end(), "--init"), 1);
    // A Batch task's: its containerRunOptions first, then the emulator's, which docker takes
    // over the user's (the last of a repeated option wins); the task's program is the
    // container's first process.
    run.options = {"--name", "mine", "--rm=false", "--workdir", "/etc"};
    run.cidfile = "/x/id";
    run.init = false;
    const std::vector<std::string> task = docker_run_command("docker", run, {"/bin/true"});
    EXPECT_EQ(std::count(task.begin(), task.end(), "--init"), 0);
    EXPECT_EQ(std::vector<std::string>(task.begin(), task.begin() + 8),
              (std::vector<std::string>{"docker", "run", "--name", "mine", "--rm=false", "--workdir", "/etc", "--rm"}));
    EXPECT_EQ(after(std::vector<std::string>(task.begin() + 3, task.end()), "--name"), "bai-job-1");
    EXPECT_EQ(after(task, "--cidfile"), "/x/id");
    EXPECT_EQ(std::vector<std::string>(task.end() - 2, task.end()), (std::vector<std::string>{"127.0.0.1:5000/bai/train:1", "/bin/true"}));
}

TEST(DockerRun, TheJobsContainerIdlesDetachedAndItsProcessesEnterIt) {
    DockerRun run;
    run.name = "bai-job-0";
    run.image = "bai/train:1";
    run.variables = {"NOT_HERE"};
    const std::vector<std::string> start = docker_start_command("docker", run);
    EXPECT_EQ(std::vector<std::string>(start.begin(), start.begin() + 4), (std::vector<std::string>{"docker", "run", "--detach", "--rm"}));
    EXPECT_EQ(std::count(start.begin(), start.end(), "--env"), 0);  // each process brings its own
    EXPECT_EQ(std::vector<std::string>(start.end() - 4, start.end()),
              (std::vector<std::string>{"bai/train:1", "/bin/sh", "-c", "while :; do sleep 3600; done"}));
    EXPECT_EQ(docker_exec_command("docker", "bai-job-0", "/mnt/w", {"A", "B"}),
              (std::vector<std::string>{"docker", "exec", "--workdir", "/mnt/w", "--env", "A", "--env", "B", "bai-job-0"}));
    EXPECT_EQ(docker_exec_command("docker", "c", "", {}), (std::vector<std::string>{"docker", "exec", "c"}));
}

TEST(ImageSource, TheServerGoesBeforeAnImageThatNamesNoHost) {
    EXPECT_EQ(image_source({{"image", "bai/train:1"}, {"serverUrl", "https://reg.azurecr.io/"}}).reference, "reg.azurecr.io/bai/train:1");
    EXPECT_EQ(image_source({{"image", "bai/train:1"}, {"serverUrl", "127.0.0.1:5000"}}).registry, "127.0.0.1:5000");
    // An image that names its host is used as it is.
    ImageSource named = image_source({{"image", "reg.azurecr.io/bai/train:1"}, {"serverUrl", "reg.azurecr.io"}});
    EXPECT_EQ(named.reference, "reg.azurecr.io/bai/train:1");
    EXPECT_EQ(named.registry, "reg.azurecr.io");
    EXPECT_EQ(image_source({{"image", "localhost/x"}}).registry, "localhost");
    // Docker Hub: no server, or Docker Hub's.
    for (const json& hub : {json{{"image", "tensorflow/tensorflow:1.8.0-gpu"}},
                            json{{"image", "tensorflow/tensorflow:1.8.0-gpu"}, {"serverUrl", "https://index.docker.io"}}}) {
        ImageSource source = image_source(hub);
        EXPECT_EQ(source.reference, "tensorflow/tensorflow:1.8.0-gpu");
        EXPECT_EQ(source.registry, "https://index.docker.io/v1/");
    }
    EXPECT_EQ(image_source({{"image", "ubuntu"}}).reference, "ubuntu");
    EXPECT_EQ(image_source(json::object()).reference, "");
    EXPECT_EQ(image_source(json("not an object")).reference, "");
}

TEST(ImageSource, CredentialsGoIntoADockerConfigAndAKeyVaultPasswordIsNoted) {
    ImageSource source = image_source({{"image", "bai/train:1"}, {"serverUrl", "127.0.0.1:5000"},
                                       {"credentials", {{"username", "u"}, {"password", "p:w"}}}});
    EXPECT_EQ(source.username, "u");
    EXPECT_FALSE(source.password_in_key_vault);
    const json config = json::parse(docker_config_json(source));
    EXPECT_EQ(crypto::base64_decode(config["auths"]["127.0.0.1:5000"]["auth"].get<std::string>()), "u:p:w");
    ImageSource vault = image_source({{"image", "x"}, {"credentials", {{"username", "u"}, {"passwordSecretReference", json::object()}}}});
    EXPECT_TRUE(vault.password_in_key_vault);
    EXPECT_EQ(vault.password, "");
}

}  // namespace
}  // namespace bai::engine
