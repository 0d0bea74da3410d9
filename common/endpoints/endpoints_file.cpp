#include "common/endpoints/endpoints_file.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace bai::endpoints {

void write(const std::filesystem::path& path, const Endpoints& e) {
    nlohmann::json doc = {{"arm", e.arm},     {"blob", e.blob},       {"file", e.file},
                          {"batch", e.batch}, {"ca_cert", e.ca_cert}, {"pid", e.pid}};
    if (!e.proxy.empty()) doc["proxy"] = e.proxy;
    if (!e.proxy_ca.empty()) doc["proxy_ca"] = e.proxy_ca;
    if (!e.ca_bundle.empty()) doc["ca_bundle"] = e.ca_bundle;
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << doc.dump(2) << "\n";
        if (!out.flush()) throw std::runtime_error("cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, path);
}

std::optional<Endpoints> read(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        throw std::runtime_error(path.string() + " is not a JSON object");
    }
    Endpoints e;
    auto take = [&](const char* key, std::string& into) {
        if (!doc.contains(key) || !doc[key].is_string()) {
            throw std::runtime_error(path.string() + ": \"" + key + "\" is missing or not a string");
        }
        into = doc[key].get<std::string>();
    };
    take("arm", e.arm);
    take("blob", e.blob);
    take("file", e.file);
    take("ca_cert", e.ca_cert);
    if (doc.contains("batch") && doc["batch"].is_string()) e.batch = doc["batch"].get<std::string>();
    if (doc.contains("proxy") && doc["proxy"].is_string()) e.proxy = doc["proxy"].get<std::string>();
    if (doc.contains("proxy_ca") && doc["proxy_ca"].is_string()) e.proxy_ca = doc["proxy_ca"].get<std::string>();
    if (doc.contains("ca_bundle") && doc["ca_bundle"].is_string()) e.ca_bundle = doc["ca_bundle"].get<std::string>();
    if (doc.contains("pid") && doc["pid"].is_number_integer()) e.pid = doc["pid"].get<long>();
    return e;
}

}  // namespace bai::endpoints
