#include "emulator/engine/container_runtime.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/text/json_value_at.h"
#include "emulator/engine/docker_client.h"
#include "emulator/engine/process.h"

namespace bai::engine {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Runs a probe command; true when it exits 0. `output`: the first line of its stdout.
bool succeeds(const std::vector<std::string>& argv, const Environment& env, std::string* output = nullptr) {
    try {
        const CommandOutput done = run_command(argv, env, fs::temp_directory_path());
        if (output) *output = done.out.substr(0, done.out.find('\n'));
        return done.status.code == 0;
    } catch (const std::exception&) {
        return false;
    }
}

RuntimeDecision refused(RuntimeDecision d, const std::string& why) {
    d.error = why;
    return d;
}

}  // namespace

RuntimeDecision choose_runtime(const json& properties, const ContainerOptions& options,
                               const RuntimeAvailability& available) {
    return choose_runtime_for_image(text::value_at(properties, "/containerSettings/imageSourceRegistry/image"_json_pointer, ""), options,
                                    available);
}

RuntimeDecision choose_runtime_for_image(const std::string& image, const ContainerOptions& options,
                                         const RuntimeAvailability& available) {
    RuntimeDecision d;
    d.image = image;
    if (d.image.empty()) {
        d.reason = "host (the job has no containerSettings)";
        return d;
    }
    const fs::path* dir = image_directory(options.images, d.image);
    const std::string strict = "--strict-images: the image " + d.image + " cannot be used: ";
    switch (options.choice) {
        case RuntimeChoice::host:
            d.reason = "host (--container-runtime host): the image " + d.image + " is not used";
            return options.strict_images ? refused(d, strict + "--container-runtime host") : d;
        case RuntimeChoice::docker:
            if (!available.docker) return refused(d, "--container-runtime docker: " + available.docker_why);
            d.kind = RuntimeKind::docker;
            d.reason = "docker (--container-runtime docker), image " + d.image;
            return d;
        case RuntimeChoice::sandbox:
        case RuntimeChoice::automatic:
            break;
    }
    bool forced_sandbox = options.choice == RuntimeChoice::sandbox;
    if (forced_sandbox && !available.sandbox) return refused(d, "--container-runtime sandbox: " + available.sandbox_why);
    if (dir && available.sandbox) {
        d.kind = RuntimeKind::sandbox;
        d.root = *dir;
        d.reason = "sandbox (bubblewrap), image " + d.image + " from " + dir->string() + " (--image)";
        return d;
    }
    if (!forced_sandbox && available.docker) {
        d.kind = RuntimeKind::docker;
        d.reason = "docker, image " + d.image;
        return d;
    }
    if (available.sandbox) {
        d.kind = RuntimeKind::sandbox;
        d.reason = "sandbox (bubblewrap) on the host's root: the image " + d.image +
                   " is not available (no --image for it" + (forced_sandbox ? ")" : ", and " + available.docker_why + ")");
        return options.strict_images ? refused(d, strict + "no --image for it and no docker engine") : d;
    }
    d.reason = "host: the image " + d.image + " is not used (" + available.docker_why + "; " + available.sandbox_why + ")";
    return options.strict_images ? refused(d, strict + available.docker_why + "; " + available.sandbox_why) : d;
}

std::pair<std::string, fs::path> parse_image_flag(std::string_view text) {
    size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
        throw std::invalid_argument("--image takes IMAGE=DIR (an image name and the directory of its root), got '" +
                                    std::string(text) + "'");
    }
    fs::path dir(text.substr(eq + 1));
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw std::invalid_argument("--image " + std::string(text) + ": " + dir.string() + " is not a directory");
    }
    return {std::string(text.substr(0, eq)), fs::absolute(dir)};
}

RuntimeChoice parse_runtime_choice(std::string_view text) {
    if (text == "auto") return RuntimeChoice::automatic;
    if (text == "docker") return RuntimeChoice::docker;
    if (text == "sandbox") return RuntimeChoice::sandbox;
    if (text == "host") return RuntimeChoice::host;
    throw std::invalid_argument("--container-runtime must be auto, docker, sandbox or host, got '" + std::string(text) + "'");
}

std::optional<std::uint64_t> parse_shm_size(std::string_view text) {
    size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    double number = 0;
    try {
        size_t used = 0;
        number = std::stod(std::string(text.substr(0, i)), &used);
        if (used != i) return std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
    std::string_view unit = text.substr(i);
    if (!unit.empty() && unit[0] == ' ') unit.remove_prefix(1);
    double scale = 1;
    if (!unit.empty()) {
        const std::string_view prefixes = "kmgtp";
        size_t power = prefixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0]))));
        if (power != std::string_view::npos) {
            for (size_t k = 0; k <= power; ++k) scale *= 1024;
            unit.remove_prefix(1);
            if (!unit.empty() && (unit[0] == 'i' || unit[0] == 'I')) unit.remove_prefix(1);
        }
    }
    if (!unit.empty() && (unit == "b" || unit == "B")) unit.remove_prefix(1);
    if (!unit.empty() || number * scale < 1 || number * scale > 1e18) return std::nullopt;
    return static_cast<std::uint64_t>(number * scale);
}

const fs::path* image_directory(const std::map<std::string, fs::path>& images, const std::string& image) {
    if (auto it = images.find(image); it != images.end()) return &it->second;
    // The tag is what follows the last ':' after the last '/' (a registry may have a port).
    size_t slash = image.rfind('/');
    size_t colon = image.rfind(':');
    if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return nullptr;
    if (auto it = images.find(image.substr(0, colon)); it != images.end()) return &it->second;
    return nullptr;
}

const RuntimeAvailability& RuntimeProbe::availability() {
    std::call_once(once_, [this] {
        Environment env = docker_environment();
        if (docker_.empty()) {
            available_.docker_why = "no docker client";
        } else if (succeeds({"timeout", "10", docker_, "version", "--format", "{{.Server.Version}}"}, env, &available_.docker_version)) {
            available_.docker = true;
        } else {
            available_.docker_why = "no docker engine answers";
        }
        if (bwrap_.empty()) {
            available_.sandbox_why = "bubblewrap (bwrap) is not installed";
        } else if (succeeds({bwrap_, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-pid",
                             "--unshare-uts", "--unshare-ipc", "--", "/bin/true"},
                            env)) {
            available_.sandbox = true;
        } else {
            available_.sandbox_why = "bubblewrap cannot make a sandbox here (namespaces not permitted)";
        }
    });
    return available_;
}

RuntimeAvailability RuntimeProbe::availability_on(const std::string& host, const std::function<std::optional<bool>(std::string&)>& ask) {
    RuntimeAvailability available = availability();
    const auto now = std::chrono::steady_clock::now();
    HostEngine engine;
    bool known = false;
    {
        std::lock_guard<std::mutex> lock(hosts_mutex_);
        auto it = hosts_.find(host);
        if (it != hosts_.end() && (it->second.docker || now - it->second.asked < std::chrono::minutes(1))) {
            engine = it->second;
            known = true;
        }
    }
    if (!known) {
        const std::optional<bool> answered = ask(engine.answer);
        engine.docker = answered.value_or(false);
        engine.asked = now;
        if (answered) {
            std::lock_guard<std::mutex> lock(hosts_mutex_);
            hosts_[host] = engine;
        }
    }
    available.docker = engine.docker;
    available.docker_version = engine.docker ? engine.answer : "";
    available.docker_why = engine.docker ? "" : "on host " + host + ": " + engine.answer;
    return available;
}

}  // namespace bai::engine
