#include "emulator/arm/mount_volumes.h"

#include <optional>

#include "common/text/file_share_url.h"

namespace bai::arm {

using nlohmann::json;

namespace {

// "0755" or "755" as a mode; 0777 when absent or not octal (the validator refuses those).
unsigned octal_mode(const json& volume, const char* key) {
    auto it = volume.find(key);
    if (it == volume.end() || !it->is_string()) return 0777;
    const std::string text = it->get<std::string>();
    if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos) return 0777;
    return static_cast<unsigned>(std::stoul(text, nullptr, 8)) & 0777;
}

std::string text_field(const json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void for_each_mount_volumes(json& properties, const std::function<void(json&)>& visit) {
    if (!properties.is_object()) return;
    auto setup = properties.find("nodeSetup");
    if (setup != properties.end() && setup->is_object()) {
        auto volumes = setup->find("mountVolumes");
        if (volumes != setup->end() && volumes->is_object()) visit(*volumes);
    }
    auto volumes = properties.find("mountVolumes");
    if (volumes != properties.end() && volumes->is_object()) visit(*volumes);
}

std::vector<Volume> volumes_of(const json& mount_volumes) {
    std::vector<Volume> out;
    if (!mount_volumes.is_object()) return out;
    for (const json& share : mount_volumes.value("azureFileShares", json::array())) {
        if (!share.is_object()) continue;
        std::optional<text::FileShareUrl> url = text::parse_file_share_url(share.value("azureFileUrl", ""));
        if (!url) {
            Volume v;
            v.account = share.value("accountName", "");
            v.relative = share.value("relativeMountPath", "");
            v.invalid = "azureFileUrl \"" + share.value("azureFileUrl", "") +
                        "\" is not the URL of an Azure Files share (https://ACCOUNT.file.core.windows.net/SHARE)";
            out.push_back(v);
            continue;
        }
        Volume v;
        v.container = url->share;
        v.account = share.value("accountName", url->account);
        v.relative = share.value("relativeMountPath", "");
        v.file_mode = octal_mode(share, "fileMode");
        v.directory_mode = octal_mode(share, "directoryMode");
        out.push_back(v);
    }
    for (const json& container : mount_volumes.value("azureBlobFileSystems", json::array())) {
        if (!container.is_object()) continue;
        Volume v;
        v.kind = Volume::Kind::blob_container;
        v.account = container.value("accountName", "");
        v.container = container.value("containerName", "");
        v.relative = container.value("relativeMountPath", "");
        v.mount_options = text_field(container, "mountOptions");
        out.push_back(v);
    }
    for (const json& server : mount_volumes.value("fileServers", json::array())) {
        if (!server.is_object()) continue;
        Volume v;
        v.kind = Volume::Kind::file_server;
        const json& reference = server.value("fileServer", json::object());
        v.file_server_id = reference.is_object() ? text_field(reference, "id") : "";
        v.relative = text_field(server, "relativeMountPath");
        v.source_directory = text_field(server, "sourceDirectory");
        v.mount_options = text_field(server, "mountOptions");
        out.push_back(v);
    }
    for (const json& system : mount_volumes.value("unmanagedFileSystems", json::array())) {
        if (!system.is_object()) continue;
        Volume v;
        v.kind = Volume::Kind::unmanaged;
        v.mount_command = text_field(system, "mountCommand");
        v.relative = text_field(system, "relativeMountPath");
        out.push_back(v);
    }
    return out;
}

}  // namespace bai::arm
