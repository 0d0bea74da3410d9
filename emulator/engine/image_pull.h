// A container job's image on a real docker engine: containerSettings.imageSourceRegistry as
// docker names and pulls it (the image under the registry's serverUrl, the registry's
// credentials), pulled before the job's first process, as the service's nodes did. The
// credentials reach docker in a config file of the pull's own, removed after it, never on a
// command line; without credentials the docker client's own configuration applies (a user who
// logged in).
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/engine/run_control.h"

namespace bai::engine {

// The key docker's config files Docker Hub's credentials under.
inline constexpr const char* kDockerHubKey = "https://index.docker.io/v1/";

// Whether an image reference's first component names a registry host (has a '.' or a ':', or
// is localhost) rather than a Docker Hub namespace.
bool names_a_host(const std::string& component);
// Whether `host` is one of Docker Hub's names (none given counts).
bool is_docker_hub(const std::string& host);
// A registry's URL without its scheme (https://, http://) and trailing '/'.
std::string without_scheme(std::string url);

struct ImageSource {
    std::string reference;  // what docker pulls and runs
    std::string registry;   // the key docker's config files its credentials under
    std::string username;
    std::string password;
    // The password is a Key Vault reference, which cannot be read offline: pulled without it.
    bool password_in_key_vault = false;
};

// From imageSourceRegistry {image, serverUrl, credentials{username, password,
// passwordSecretReference}}. An image whose first component names a host (has a '.' or a ':',
// or is "localhost") is used as it is; otherwise a serverUrl (its scheme and trailing '/' left
// out) other than Docker Hub's goes before it.
ImageSource image_source(const nlohmann::json& registry);

// docker's config.json holding the credentials: {"auths": {REGISTRY: {"auth": base64(user:password)}}}.
std::string docker_config_json(const ImageSource& source);

struct PullResult {
    enum class Outcome { present, pulled, failed, cancelled };
    Outcome outcome = Outcome::failed;
    std::string message;  // failed: docker's (the registry's) last words
};

// The docker client a pull runs: this machine's, or one on a node's host.
struct DockerClient {
    // The words that run it: its path, or those that put a command on the host, then `docker`.
    std::vector<std::string> argv;
    // For a host that does not see this machine's disk: copies a directory and the files named
    // there (the same paths), and removes it there again. Unset: the client sees this disk.
    std::function<void(const std::vector<std::filesystem::path>&)> send;
    std::function<void(const std::filesystem::path&)> withdraw;
};

// Pulls the image unless the engine has it (an image a user imported or built is used as it is,
// as `docker run` would). `scratch` (made and removed here) holds the credentials' config and
// the pull's output; each line of the output goes to `log`.
PullResult pull_image(const DockerClient& docker, const ImageSource& source, const std::filesystem::path& scratch,
                      RunControl& control, const std::function<void(const std::string&)>& log);
inline PullResult pull_image(const std::string& docker, const ImageSource& source, const std::filesystem::path& scratch,
                             RunControl& control, const std::function<void(const std::string&)>& log) {
    return pull_image(DockerClient{{docker}, {}, {}}, source, scratch, control, log);
}

}  // namespace bai::engine
