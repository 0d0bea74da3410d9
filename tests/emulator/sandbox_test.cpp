#include "emulator/engine/sandbox.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "emulator/engine/docker_client.h"
#include "emulator/engine/node_view.h"
#include "emulator/engine/writable_root.h"

namespace bai::engine {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

// The index of `words` as consecutive arguments, or -1.
long find_words(const Args& argv, const Args& words) {
    auto it = std::search(argv.begin(), argv.end(), words.begin(), words.end());
    return it == argv.end() ? -1 : it - argv.begin();
}

NodeDirectories directories() {
    return {"/data/nodes/c/tvm-1", "job1", "/data/nodes/c/shared/uuid",
            {{"afs", "/data/storage/acct/shares/jobs"}, {"bfs", "/data/nodes/c/tvm-1/mounts/bfs"}},
            {{"logs", "/data/storage/acct/shares/logs"}}};
}

TEST(Sandbox, CommandHasTheRootNamespacesDevicesAndBindsInOrder) {
    SandboxSpec spec;
    spec.root = "/layers/root";
    spec.root_writable = true;
    spec.binds = {{"/n/tmp", "/tmp"}, {"/n/jobs", "/mnt/x/jobs"}};
    spec.dirs = {"/mnt/x/mounts"};
    spec.devices = {"/dev/nvidia3"};
    spec.hostname = "tvm-1";
    spec.shm_bytes = 1 << 20;
    spec.cwd = "/mnt/x/jobs/j";
    Args argv = sandbox_command("/usr/bin/bwrap", spec, {"/bin/bash", "-c", "echo hi"});
    EXPECT_EQ(find_words(argv, {"/usr/bin/bwrap", "--bind", "/layers/root", "/"}), 0);
    EXPECT_GE(find_words(argv, {"--dev-bind-try", "/dev/nvidia3", "/dev/nvidia3"}), 0);
    EXPECT_GE(find_words(argv, {"--size", "1048576", "--tmpfs", "/dev/shm"}), 0);
    long mnt = find_words(argv, {"--tmpfs", "/mnt"});
    long dir = find_words(argv, {"--dir", "/mnt/x/mounts"});
    long jobs = find_words(argv, {"--bind", "/n/jobs", "/mnt/x/jobs"});
    EXPECT_TRUE(mnt >= 0 && mnt < dir && dir < jobs) << mnt << " " << dir << " " << jobs;
    EXPECT_GE(find_words(argv, {"--unshare-pid", "--unshare-uts", "--unshare-ipc"}), 0);
    EXPECT_GE(find_words(argv, {"--hostname", "tvm-1"}), 0);
    EXPECT_GE(find_words(argv, {"--chdir", "/mnt/x/jobs/j"}), 0);
    EXPECT_EQ(find_words(argv, {"--", "/bin/bash", "-c", "echo hi"}), static_cast<long>(argv.size()) - 4);
    EXPECT_EQ(find_words(argv, {"--share-net"}), -1);
    EXPECT_EQ(find_words(argv, {"--unshare-net"}), -1);  // the nodes talk over loopback

    spec.root_writable = false;
    EXPECT_EQ(find_words(sandbox_command("bwrap", spec, {"true"}), {"bwrap", "--ro-bind", "/layers/root", "/"}), 0);
}

TEST(Sandbox, SystemSubmountsAreWhatAnOverlayOfTheHostRootWouldMiss) {
    const std::string mountinfo =
        "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
        "23 22 0:22 / /usr/local/nvidia ro,relatime - squashfs /dev/vdb ro\n"
        "24 22 0:23 / /proc rw - proc proc rw\n"
        "25 22 0:24 / /etc/resolv.conf ro - ext4 /dev/vda rw\n"
        "26 22 0:25 / /opt/my\\040tools ro - ext4 /dev/vdc rw\n"
        "27 22 0:26 / /tmp/bai/nodes/c/n/mounts/afs rw - fuse.bai-share jobs rw\n"
        "28 22 0:27 / /usr/local/nvidia ro - squashfs /dev/vdb ro\n"
        "29 22 0:28 / /usrlocal rw - ext4 /dev/vdd rw";
    EXPECT_EQ(system_submounts(mountinfo),
              (std::vector<std::string>{"/usr/local/nvidia", "/etc/resolv.conf", "/opt/my tools"}));
    SandboxSpec spec;
    spec.root = "/overlay/merged";
    spec.root_writable = true;
    spec.host_read_only = {"/usr/local/nvidia"};
    auto argv = sandbox_command("bwrap", spec, {"true"});
    auto at = std::find(argv.begin(), argv.end(), "--ro-bind-try");
    ASSERT_NE(at, argv.end());
    EXPECT_EQ(*(at + 1), "/usr/local/nvidia");
    EXPECT_EQ(*(at + 2), "/usr/local/nvidia");
}

TEST(Sandbox, BindsAreOrderedParentsFirst) {
    std::vector<SandboxBind> binds{{"/a", "/mnt/x/jobs/j/mounts/afs"}, {"/b", "/tmp"}, {"/c", "/mnt/x/jobs"}};
    order_binds(binds);
    EXPECT_EQ(binds[0].view, "/tmp");
    EXPECT_EQ(binds[1].view, "/mnt/x/jobs");
    EXPECT_EQ(binds[2].view, "/mnt/x/jobs/j/mounts/afs");
}

TEST(NodeView, ContainerSeesTheServicePathsBoundToTheNode) {
    NodeView view = container_view(directories());
    const std::string root = kServiceRoot;
    EXPECT_EQ(view.paths.mount_root, root + "/mounts");
    EXPECT_EQ(view.paths.job_temp, root + "/jobs/job1");
    EXPECT_EQ(view.paths.job_mount_root, root + "/jobs/job1/mounts");
    EXPECT_EQ(view.paths.shared_job_temp, root + "/jobs/job1/shared");
    EXPECT_EQ(view.paths.hostfile, root + "/jobs/job1/hostfile");
    EXPECT_EQ(view.job_dir, root + "/jobs/job1");
    EXPECT_EQ(*view.to_host(root + "/mounts/afs/out/x.txt"), fs::path("/data/storage/acct/shares/jobs/out/x.txt"));
    EXPECT_EQ(*view.to_host(root + "/mounts/afs"), fs::path("/data/storage/acct/shares/jobs"));
    EXPECT_EQ(*view.to_host(root + "/mounts/bfs/a"), fs::path("/data/nodes/c/tvm-1/mounts/bfs/a"));
    EXPECT_EQ(*view.to_host(root + "/jobs/job1/mounts/logs/l"), fs::path("/data/storage/acct/shares/logs/l"));
    EXPECT_EQ(*view.to_host(root + "/jobs/job1/shared/f"), fs::path("/data/nodes/c/shared/uuid/f"));
    EXPECT_EQ(*view.to_host(root + "/jobs/job1/hostfile"), fs::path("/data/nodes/c/tvm-1/jobs/job1/hostfile"));
    EXPECT_EQ(*view.to_host(root + "/mounts/afs/../bfs/a"), fs::path("/data/nodes/c/tvm-1/mounts/bfs/a"));
    // No volume there: the node's own mount directory, its local disk, as on the service's nodes.
    EXPECT_EQ(*view.to_host(root + "/mounts/afsx/a"), fs::path("/data/nodes/c/tvm-1/mounts/afsx/a"));
    EXPECT_EQ(*view.to_host(root + "/mounts"), fs::path("/data/nodes/c/tvm-1/mounts"));
    EXPECT_EQ(view.to_host("/var/tmp/x"), std::nullopt);
}

TEST(NodeView, HostSeesTheNodesDirectories) {
    NodeView view = host_view(directories());
    EXPECT_EQ(view.paths.mount_root, "/data/nodes/c/tvm-1/mounts");
    EXPECT_EQ(view.paths.job_temp, "/data/nodes/c/tvm-1/jobs/job1");
    EXPECT_EQ(view.paths.shared_job_temp, "/data/nodes/c/tvm-1/jobs/job1/shared");
    EXPECT_TRUE(view.binds.empty());
    EXPECT_EQ(*view.to_host("/anything/at/all"), fs::path("/anything/at/all"));
}

TEST(Docker, RunCommandPassesVariablesByNameAndGpusByUuid) {
    DockerRun run;
    run.name = "bai-job-0-run0";
    run.image = "nvidia/cuda:9.0-base";
    run.binds = {{"/n/jobs", "/mnt/x/jobs"}};
    run.gpus = {"GPU-a", "GPU-b"};
    run.shm_bytes = 1024;
    run.cwd = "/mnt/x/jobs/j";
    run.variables = {"SECRET"};
    Args argv = docker_run_command("/usr/bin/docker", run, {"/bin/bash", "-c", "train"});
    EXPECT_EQ(find_words(argv, {"/usr/bin/docker", "run", "--rm", "--name", "bai-job-0-run0"}), 0);
    EXPECT_GE(find_words(argv, {"--network", "host"}), 0);
    EXPECT_GE(find_words(argv, {"--volume", "/n/jobs:/mnt/x/jobs"}), 0);
    EXPECT_GE(find_words(argv, {"--gpus", "\"device=GPU-a,GPU-b\""}), 0);
    EXPECT_GE(find_words(argv, {"--shm-size", "1024"}), 0);
    EXPECT_GE(find_words(argv, {"--workdir", "/mnt/x/jobs/j"}), 0);
    EXPECT_GE(find_words(argv, {"--env", "SECRET"}), 0);
    EXPECT_EQ(find_words(argv, {"nvidia/cuda:9.0-base", "/bin/bash", "-c", "train"}), static_cast<long>(argv.size()) - 4);
}

TEST(Docker, NamesAreWhatDockerAccepts) {
    EXPECT_EQ(docker_name("bai-job_1.x-tvm-1"), "bai-job_1.x-tvm-1");
    EXPECT_EQ(docker_name("a b/c"), "a-b-c");
    EXPECT_EQ(docker_name("_x"), "c-x");
    EXPECT_EQ(docker_name(""), "c");
}

TEST(WritableRoot, RemoveTreeUnmountsWhatIsMountedInIt) {
    // Needs root (mount): where it cannot mount, the sandbox runs read-only and this says so.
    fs::path dir = fs::temp_directory_path() / ("bai-root-test-" + std::to_string(::getpid()));
    fs::create_directories(dir / "lower" / "etc");
    std::string why;
    auto root = WritableRoot::mount(dir / "lower", dir / "layer", why);
    if (!root) GTEST_SKIP() << "SKIPPED: cannot mount an overlay here: " << why;
    { std::ofstream(root->path() / "etc" / "written") << "x"; }
    EXPECT_TRUE(fs::exists(dir / "layer" / "upper" / "etc" / "written"));
    EXPECT_FALSE(fs::exists(dir / "lower" / "etc" / "written"));
    std::error_code ec;
    remove_tree(dir / "layer", ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(fs::exists(dir / "layer"));
    EXPECT_TRUE(fs::exists(dir / "lower" / "etc"));
    root.reset();  // already gone: harmless
    fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace bai::engine
