#include "emulator/batch/container_rules.h"

#include "emulator/batch/batch_error.h"

namespace bai::batch {

using nlohmann::json;

namespace {

// An image reference as docker takes one: not empty, no whitespace, and not an option (a name
// starting with '-' would be read as one by docker's pull and run).
void check_image(const json& image, const std::string& path) {
    const std::string text = image.is_string() ? image.get<std::string>() : "";
    if (text.empty() || text[0] == '-' || text.find_first_of(" \t\r\n") != std::string::npos) {
        throw invalid_property(path, image.dump(), "The value must be a container image reference");
    }
}

void check_registry(const json& registry, const std::string& path) {
    if (!registry.is_object()) throw invalid_property(path, registry.dump(), "The value must be an object");
    for (const char* name : {"registryServer", "username", "password"}) {
        if (registry.contains(name) && !registry[name].is_string()) {
            throw invalid_property(path + "." + name, registry[name].dump(), "The value must be a string");
        }
    }
}

}  // namespace

void check_container_settings(const json& task, const std::string& prefix) {
    if (!task.is_object() || !task.contains("containerSettings")) return;
    const json& settings = task["containerSettings"];
    const std::string path = prefix + "containerSettings";
    if (!settings.is_object()) throw invalid_property(path, settings.dump(), "The value must be an object");
    if (!settings.contains("imageName")) throw missing_property(path + ".imageName");
    check_image(settings["imageName"], path + ".imageName");
    if (settings.contains("containerRunOptions") && !settings["containerRunOptions"].is_string()) {
        throw invalid_property(path + ".containerRunOptions", settings["containerRunOptions"].dump(), "The value must be a string");
    }
    if (settings.contains("workingDirectory") && settings["workingDirectory"] != "taskWorkingDirectory" &&
        settings["workingDirectory"] != "containerImageDefault") {
        throw invalid_property(path + ".workingDirectory", settings["workingDirectory"].dump(),
                               "The value must be taskWorkingDirectory or containerImageDefault");
    }
    if (settings.contains("registry")) check_registry(settings["registry"], path + ".registry");
}

void check_container_configuration(const json& configuration, const std::string& prefix) {
    if (!configuration.is_object() || !configuration.contains("containerConfiguration")) return;
    const json& container = configuration["containerConfiguration"];
    const std::string path = prefix + "containerConfiguration";
    if (!container.is_object()) throw invalid_property(path, container.dump(), "The value must be an object");
    if (!container.contains("type")) throw missing_property(path + ".type");
    if (container["type"] != "dockerCompatible") {
        throw invalid_property(path + ".type", container["type"].dump(), "The value must be dockerCompatible");
    }
    for (const char* list : {"containerImageNames", "containerRegistries"}) {
        if (container.contains(list) && !container[list].is_array()) {
            throw invalid_property(path + "." + list, container[list].dump(), "The value must be a list");
        }
    }
    const json images = container.value("containerImageNames", json::array());
    for (size_t i = 0; i < images.size(); ++i) check_image(images[i], path + ".containerImageNames[" + std::to_string(i) + "]");
    const json registries = container.value("containerRegistries", json::array());
    for (size_t i = 0; i < registries.size(); ++i) check_registry(registries[i], path + ".containerRegistries[" + std::to_string(i) + "]");
}

}  // namespace bai::batch
