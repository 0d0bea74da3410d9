#include "emulator/engine/image_pull.h"

#include <fstream>
#include <sstream>

#include "common/crypto/base64.h"
#include "emulator/engine/docker_client.h"
#include "common/text/json_string.h"

namespace bai::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

}  // namespace

bool names_a_host(const std::string& component) {
    return component.find('.') != std::string::npos || component.find(':') != std::string::npos || component == "localhost";
}

bool is_docker_hub(const std::string& host) {
    return host.empty() || host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io" ||
           host == "registry.hub.docker.com";
}

std::string without_scheme(std::string url) {
    for (const char* scheme : {"https://", "http://"}) {
        if (url.rfind(scheme, 0) == 0) url = url.substr(std::string(scheme).size());
    }
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
}

ImageSource image_source(const json& registry) {
    ImageSource source;
    const std::string image = text::string_member(registry, "image");
    const std::string server = without_scheme(text::string_member(registry, "serverUrl"));
    const size_t slash = image.find('/');
    std::string host;
    if (slash != std::string::npos && names_a_host(image.substr(0, slash))) {
        source.reference = image;
        host = image.substr(0, slash);
    } else if (!is_docker_hub(server)) {
        source.reference = server + "/" + image;
        host = server.substr(0, server.find('/'));
    } else {
        source.reference = image;
    }
    source.registry = is_docker_hub(host) ? kDockerHubKey : host;
    const json credentials = registry.is_object() ? registry.value("credentials", json::object()) : json::object();
    source.username = text::string_member(credentials, "username");
    source.password = text::string_member(credentials, "password");
    source.password_in_key_vault = source.password.empty() && credentials.is_object() && credentials.contains("passwordSecretReference");
    return source;
}

std::string docker_config_json(const ImageSource& source) {
    json config{{"auths", {{source.registry, {{"auth", crypto::base64_encode(source.username + ":" + source.password)}}}}}};
    return config.dump();
}

PullResult pull_image(const DockerClient& docker, const ImageSource& source, const fs::path& scratch, RunControl& control,
                      const std::function<void(const std::string&)>& log) {
    const Environment env = docker_environment();
    const auto command = [&docker](std::vector<std::string> words) {
        words.insert(words.begin(), docker.argv.begin(), docker.argv.end());
        return words;
    };
    {
        std::shared_ptr<Process> inspect =
            control.start({command({"image", "inspect", "--format", "{{.Id}}", source.reference}), env, "/", "/dev/null", "/dev/null"});
        if (!inspect) return {PullResult::Outcome::cancelled, ""};
        if (inspect->wait().code == 0) {
            log("image " + source.reference + " is on the engine: not pulled");
            return {PullResult::Outcome::present, ""};
        }
    }
    std::error_code ec;
    fs::remove_all(scratch, ec);
    fs::create_directories(scratch, ec);
    fs::permissions(scratch, fs::perms::owner_all, ec);
    std::vector<std::string> argv;
    bool sent = false;
    if (!source.username.empty()) {
        const fs::path config = scratch / "config.json";
        std::ofstream(config) << docker_config_json(source);
        fs::permissions(config, fs::perms::owner_read | fs::perms::owner_write, ec);
        if (docker.send) {
            try {
                docker.send({scratch, config});
                sent = true;
            } catch (const std::exception& e) {
                fs::remove_all(scratch, ec);
                return {PullResult::Outcome::failed, std::string("the registry's credentials could not reach the docker client: ") + e.what()};
            }
        }
        argv.insert(argv.end(), {"--config", scratch.string()});
        log("pulling " + source.reference + " as " + source.username + " (credentials for " + source.registry + ")");
    } else {
        if (source.password_in_key_vault) log("the registry password is a Key Vault reference, which cannot be read offline: pulled without it");
        log("pulling " + source.reference);
    }
    argv.insert(argv.end(), {"pull", source.reference});
    argv = command(std::move(argv));
    const fs::path output = scratch / "pull.log";
    PullResult result;
    try {
        std::shared_ptr<Process> pull = control.start({argv, env, "/", output, output});
        const int code = pull ? pull->wait().code : -1;
        std::ifstream in(output);
        std::string line, last;
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            log("pull: " + line);
            last = line;
        }
        if (!pull || control.cancelled()) {
            result = {PullResult::Outcome::cancelled, ""};
        } else if (code == 0) {
            result = {PullResult::Outcome::pulled, ""};
        } else {
            result = {PullResult::Outcome::failed, last.empty() ? "docker pull exited with code " + std::to_string(code) : last};
        }
    } catch (const std::exception& e) {
        result = {PullResult::Outcome::failed, e.what()};
    }
    fs::remove_all(scratch, ec);  // the credentials go with it
    if (sent && docker.withdraw) docker.withdraw(scratch);  // there too
    return result;
}

}  // namespace bai::engine
