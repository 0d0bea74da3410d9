// The docker commands of a job's container on a node, as Batch AI ran one on its nodes: one
// container per job and node, started before the job's preparation and removed when the job
// ends (what the preparation installs is there for the job), with the machine's network (MPI and
// parameter servers on loopback), the node's GPUs by UUID and the service's paths
// (/mnt/batch/tasks/shared/LS_root/...) bound to the node's directories; each process of the job
// enters it with `docker exec`, its variables passed by name (their values come from the
// client's environment, never the command line).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "emulator/engine/sandbox.h"
#include "emulator/engine/shell_words.h"

namespace bai::engine {

struct DockerRun {
    std::string name;
    std::string image;
    std::vector<SandboxBind> binds;
    std::vector<std::string> gpus;  // UUIDs
    std::optional<std::uint64_t> shm_bytes;
    std::string cwd;
    std::vector<std::string> variables;  // names, values from the client's environment
    std::string owner;  // the emulator's (kOwnerLabel); none when empty
    std::string allocation;  // what holds the node on its host (kAllocationLabel); none when empty
    // The user's own options of docker run (a Batch task's containerRunOptions): before the
    // emulator's, which docker then takes (the last of a repeated option wins), so that none can
    // rename, keep or hide the container the emulator removes.
    std::vector<std::string> options;
    std::string cidfile;  // where docker writes the container's id; none when empty
    // docker's init as the container's first process (it reaps what the job's processes leave);
    // without it, the command is the first process, as `docker create` makes it.
    bool init = true;
};

// The label every container of an emulator carries, its value the emulator's nodes directory:
// one engine may serve several emulators, and each removes only its own.
inline constexpr const char* kOwnerLabel = "bai-emulator.owner";
// On a node's host (node_hosts.h), the host system's id of what holds the node (a Slurm job):
// what the host's own cleanup goes by when that ends (slurm_commands.h, holder_script).
inline constexpr const char* kAllocationLabel = "bai-emulator.allocation";

std::vector<std::string> docker_run_command(const std::string& docker, const DockerRun& run,
                                            const std::vector<std::string>& command);

// `docker run --detach` of the container that the job's processes enter: it idles (a shell
// sleeping) until removed.
std::vector<std::string> docker_start_command(const std::string& docker, const DockerRun& run);

// The words before a command that run it in the started container `name`, in `cwd`, with the
// variables named.
std::vector<std::string> docker_exec_command(const std::string& docker, const std::string& name, const std::string& cwd,
                                             const std::vector<std::string>& variables);

// The variables of a node's base environment that describe the machine, not the job: a docker
// container keeps its image's own.
bool machine_variable(const std::string& name);

// The environment the docker client runs with: the nodes' base environment and the DOCKER_*
// variables of the emulator's own (DOCKER_HOST, DOCKER_CONTEXT, DOCKER_CONFIG, DOCKER_CERT_PATH,
// DOCKER_TLS_VERIFY), which say where the engine is.
Environment docker_environment();

// Removes (docker rm --force) every container labelled as `owner`'s: what an emulator killed
// with its jobs running left on the engine. Quiet and quick when no engine answers.
void remove_owned_containers(const std::string& docker, const std::string& owner);

// A container name made of what docker accepts ([a-zA-Z0-9][a-zA-Z0-9_.-]*).
std::string docker_name(const std::string& text);

}  // namespace bai::engine
