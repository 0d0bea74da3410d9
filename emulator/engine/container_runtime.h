// Where a job's processes run when it has containerSettings: in docker when an engine answers,
// in a bubblewrap sandbox (the image's root from --image IMAGE=DIR, else the host's root), or on
// the host. The choice is pure (choose_runtime); what works on this machine is probed once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace bai::engine {

enum class RuntimeKind { host, sandbox, docker };
// --container-runtime: auto (docker, else sandbox, else host) or one of them.
enum class RuntimeChoice { automatic, docker, sandbox, host };

struct ContainerOptions {
    RuntimeChoice choice = RuntimeChoice::automatic;
    std::map<std::string, std::filesystem::path> images;  // --image IMAGE=DIR
    // --strict-images: a job whose image cannot be used fails instead of running without it.
    bool strict_images = false;
};

struct RuntimeAvailability {
    bool docker = false;
    std::string docker_why;  // why not, when not
    bool sandbox = false;
    std::string sandbox_why;
    std::string docker_version;  // the engine's, as it answered
};

struct RuntimeDecision {
    RuntimeKind kind = RuntimeKind::host;
    std::string image;            // containerSettings' image; empty without containerSettings
    std::filesystem::path root;   // sandbox: the image's root directory; empty: the host's root
    std::string reason;           // one line for execution.log
    std::string error;            // not empty: the job cannot run (--strict-images, forced runtime missing)
};

// For a Batch AI job's properties (containerSettings.imageSourceRegistry.image).
RuntimeDecision choose_runtime(const nlohmann::json& properties, const ContainerOptions& options,
                               const RuntimeAvailability& available);
// For an image by its name (a Batch task's imageName, a pool's containerImageNames); empty: none.
RuntimeDecision choose_runtime_for_image(const std::string& image, const ContainerOptions& options,
                                         const RuntimeAvailability& available);

// "IMAGE=DIR" of --image; DIR must be an existing directory. Throws std::invalid_argument.
std::pair<std::string, std::filesystem::path> parse_image_flag(std::string_view text);
// "auto", "docker", "sandbox" or "host". Throws std::invalid_argument.
RuntimeChoice parse_runtime_choice(std::string_view text);

// containerSettings.shmSize in docker's syntax ("2g", "512m", "16gb", "1.5 GiB"; binary units)
// in bytes; nullopt when it is not such a size.
std::optional<std::uint64_t> parse_shm_size(std::string_view text);

// The directory given for `image`: its exact name, else its repository without the tag
// (--image ubuntu=DIR serves ubuntu:16.04), else nullptr.
const std::filesystem::path* image_directory(const std::map<std::string, std::filesystem::path>& images,
                                             const std::string& image);

// What this machine offers, probed at the first call (a docker client asking its engine, bwrap
// making a namespace), then remembered. Thread-safe.
class RuntimeProbe {
public:
    // `owner`: what the containers of this emulator are labelled with (docker_client.h), so that
    // a later start finds those a killed one left.
    RuntimeProbe(std::string bwrap, std::string docker, std::string owner = "")
        : bwrap_(std::move(bwrap)), docker_(std::move(docker)), owner_(std::move(owner)) {}
    const RuntimeAvailability& availability();
    // What a node's host offers (node_hosts.h): this machine's sandbox (bubblewrap is asked of the
    // hosts as of this machine), and the docker engine that `ask` finds there (it runs `docker
    // version --format {{.Server.Version}}` on the host: true and the version, or false and why;
    // nullopt when it could not ask, which is not remembered). Asked once per host: an engine that
    // answered is remembered, one that did not is asked again after a minute (a site may start it
    // later).
    RuntimeAvailability availability_on(const std::string& host, const std::function<std::optional<bool>(std::string& answer)>& ask);
    const std::string& bwrap() const { return bwrap_; }
    const std::string& docker() const { return docker_; }
    const std::string& owner() const { return owner_; }

private:
    std::string bwrap_;   // its path; empty when not installed
    std::string docker_;  // the docker client's path; empty when not installed
    std::string owner_;
    std::once_flag once_;
    RuntimeAvailability available_;
    struct HostEngine {
        bool docker = false;
        std::string answer;  // the version, or why not
        std::chrono::steady_clock::time_point asked;
    };
    std::mutex hosts_mutex_;
    std::map<std::string, HostEngine> hosts_;
};

}  // namespace bai::engine
