#include "emulator/arm/mount_volumes.h"

#include <cctype>

#include "emulator/arm/text.h"

namespace bai::arm {

using nlohmann::json;

namespace {

// "127.0.0.1:10004", "localhost:10004", "[::1]:10004": an emulator host, whose URLs are path style.
bool path_style_host(const std::string& host) {
    return host.empty() || std::isdigit(static_cast<unsigned char>(host[0])) || host[0] == '[' ||
           host.rfind("localhost", 0) == 0;
}

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

std::vector<Volume> volumes_of(const json& mount_volumes) {
    std::vector<Volume> out;
    if (!mount_volumes.is_object()) return out;
    for (const json& share : mount_volumes.value("azureFileShares", json::array())) {
        if (!share.is_object()) continue;
        std::string url = share.value("azureFileUrl", "");
        size_t scheme = url.find("//");
        std::vector<std::string> parts = split_path(scheme == std::string::npos ? url : url.substr(scheme + 2));
        if (parts.size() < 2) continue;
        Volume v;
        if (path_style_host(parts[0])) {
            if (parts.size() < 3) continue;
            v.account = parts[1];
            v.container = parts[2];
        } else {
            v.account = parts[0].substr(0, parts[0].find('.'));
            v.container = parts[1];
        }
        v.account = share.value("accountName", v.account);
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
