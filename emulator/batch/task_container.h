// Tasks with containerSettings on a pool with containerConfiguration, as the service runs them on
// a Linux node: each task in a container of its own, made from the task's image with `docker
// run` (the service's `docker create` and start: containerRunOptions go among docker's options),
// the node's root directory bound at the path the task's variables name, the task's variables
// passed in by name, the task's working directory (or the image's, with containerImageDefault),
// the host's network, the node's GPUs. The image is pulled when the task starts unless the engine
// has it (the pool's containerImageNames are pulled when the node starts), with the credentials
// of the task's registry, else of the pool's registry for the image's server.
//
// Where the docker runtime is not chosen (container_runtime.h: --container-runtime, no engine),
// a task's image with a root given by --image runs in a sandbox of that root, else the task runs
// on the node as a task without containerSettings.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "emulator/engine/container_runtime.h"
#include "emulator/engine/image_pull.h"
#include "emulator/engine/run_control.h"
#include "emulator/engine/shell_words.h"

namespace bai::batch {

// What a node of a pool with containerConfiguration gives its tasks' containers.
struct NodeContainers {
    engine::RuntimeProbe* runtimes = nullptr;  // the nodes' (one per emulator)
    engine::ContainerOptions options;           // --container-runtime, --image, --strict-images
    nlohmann::json registries = nlohmann::json::array();  // containerConfiguration.containerRegistries
    std::string node_id;
    std::filesystem::path node_root;
    std::string root_view;          // where the node's processes see node_root
    std::string hostname;           // a sandbox's
    std::vector<std::string> gpus;  // UUIDs of the node's GPUs that have devices
    std::vector<std::string> devices;  // their device nodes, for a sandbox
    std::filesystem::path scratch;  // the node's own: pulls' credentials, containers' ids
};

// The image as docker pulls it and the credentials it is pulled with: `registry` (the task's
// own ContainerRegistry) when it has a user name, else the registry of `registries` (the pool's)
// whose registryServer is the image's server (Docker Hub's: docker.io, or none given).
engine::ImageSource batch_image_source(const std::string& image, const nlohmann::json& registry,
                                       const nlohmann::json& registries);

// A pull docker could not do, as the service's failure code: ContainerInvalidRegistry when the
// registry refused the credentials or could not be reached, else ContainerInvalidImage.
std::string pull_failure_code(const std::string& docker_message);

// Pulls the pool's containerImageNames that its tasks would run in docker onto the node's
// engine (one that --image gives a root, or none when the docker runtime is not chosen, is
// not pulled). nullopt: done; else the node's error (ComputeNodeError) that makes it unusable:
// a failed pull, or an image no runtime may take (--container-runtime docker without an engine,
// --strict-images). Cancelled (the node left): nullopt.
std::optional<nlohmann::json> prefetch_images(const nlohmann::json& container_configuration, const NodeContainers& node,
                                              engine::RunControl& control);

struct ContainerRun {
    int exit_code = -1;        // -1: none (failure says why, or it was cancelled before it began when null)
    nlohmann::json failure;    // failureInfo, null when none
    nlohmann::json container;  // TaskContainerExecutionInformation, null when none was made
};

// Runs `argv` (the task's command line, as words; empty: the image's own command) in the
// container of the task's containerSettings, in `dir`/wd, writing `dir`/stdout.txt and
// stderr.txt. nullopt: no container runtime is chosen for it, the node runs it as it runs any
// task (logged with the reason). Stopped by `control`, its container is removed and the exit
// code is the killed client's.
std::optional<ContainerRun> run_in_container(const nlohmann::json& task, const engine::Environment& env, const std::filesystem::path& dir,
                              engine::RunControl& control, const NodeContainers& node, const std::vector<std::string>& argv);

}  // namespace bai::batch
