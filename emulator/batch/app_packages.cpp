#include "emulator/batch/app_packages.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "common/text/ascii.h"
#include "emulator/batch/batch_error.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool valid_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    }) && name != "." && name != "..";
}

// The variable's name on a Linux node: '.', '-' and '#' flattened to '_', the case kept.
std::string flattened(std::string text) {
    for (char& c : text) {
        if (c == '.' || c == '-' || c == '#') c = '_';
    }
    return text;
}

}  // namespace

AppPackage parse_app_package_flag(std::string_view flag) {
    const size_t equals = flag.find('=');
    if (equals == std::string_view::npos) throw std::invalid_argument("--batch-application wants [ACCOUNT/]APP:VERSION=DIR");
    std::string_view name = flag.substr(0, equals);
    AppPackage package;
    package.dir = fs::path(std::string(flag.substr(equals + 1)));
    if (const size_t slash = name.find('/'); slash != std::string_view::npos) {
        package.account = std::string(name.substr(0, slash));
        name = name.substr(slash + 1);
    }
    const size_t colon = name.find(':');
    if (colon == std::string_view::npos) throw std::invalid_argument("--batch-application wants [ACCOUNT/]APP:VERSION=DIR");
    package.application = std::string(name.substr(0, colon));
    package.version = std::string(name.substr(colon + 1));
    if (!valid_name(package.application) || !valid_name(package.version)) {
        throw std::invalid_argument("--batch-application: an application and a version have 1 to 64 letters, digits, '-', '_' and '.'");
    }
    std::error_code ec;
    if (!fs::is_directory(package.dir, ec)) {
        throw std::invalid_argument("--batch-application: " + package.dir.string() + " is not a directory");
    }
    return package;
}

json AppPackages::summaries(const std::string& account) const {
    std::map<std::string, json> by_id;  // lower-cased id -> summary
    for (const AppPackage& p : packages_) {
        if (!p.account.empty() && p.account != account) continue;
        json& summary = by_id[text::lower(p.application)];
        if (summary.is_null()) summary = {{"id", p.application}, {"versions", json::array()}};
        if (std::find(summary["versions"].begin(), summary["versions"].end(), p.version) == summary["versions"].end()) {
            summary["versions"].push_back(p.version);
        }
    }
    json out = json::array();
    for (auto& [id, summary] : by_id) out.push_back(std::move(summary));
    return out;
}

std::optional<json> AppPackages::summary(const std::string& account, const std::string& application) const {
    for (json& one : summaries(account)) {
        if (text::iequals(one.value("id", ""), application)) return one;
    }
    return std::nullopt;
}

std::optional<AppPackage> AppPackages::find(const std::string& account, const json& reference) const {
    if (!reference.is_object() || !reference.contains("applicationId") || !reference["applicationId"].is_string()) return std::nullopt;
    const std::string application = reference["applicationId"];
    const json version = reference.value("version", json());
    for (const AppPackage& p : packages_) {
        if ((!p.account.empty() && p.account != account) || !text::iequals(p.application, application)) continue;
        // Without a version: the application's default, its first given.
        if (version.is_null() || (version.is_string() && version.get<std::string>() == p.version)) return p;
    }
    return std::nullopt;
}

void AppPackages::check_references(const std::string& account, const json& references, const std::string& property) const {
    if (!references.is_array()) return;
    for (size_t i = 0; i < references.size(); ++i) {
        if (find(account, references[i])) continue;
        throw BatchError(400, "InvalidApplicationPackageReferences", "One or more of the specified application package references are invalid.",
                         {{"PropertyName", property + "[" + std::to_string(i) + "]"},
                          {"Reason", "The account has no package " + references[i].dump() +
                                         " (the emulator's packages come from --batch-application APP:VERSION=DIR)"}});
    }
}

void AppPackages::install(const std::string& account, const json& references, const fs::path& node_root, engine::Environment& env,
                          const std::function<std::string(const fs::path&)>& view) const {
    if (!references.is_array()) return;
    for (const json& reference : references) {
        std::optional<AppPackage> package = find(account, reference);
        if (!package) continue;
        const fs::path dir = node_root / "applications" / (package->application + "_" + package->version);
        std::error_code ec;
        if (!fs::exists(dir, ec)) {
            fs::create_directories(dir.parent_path(), ec);
            const fs::path partial = dir.string() + ".partial";
            fs::remove_all(partial, ec);
            fs::copy(package->dir, partial, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
            if (!ec) fs::rename(partial, dir, ec);
        }
        const std::string seen = view(dir);
        env["AZ_BATCH_APP_PACKAGE_" + flattened(package->application) + "_" + flattened(package->version)] = seen;
        if (reference.value("version", json()).is_null()) env["AZ_BATCH_APP_PACKAGE_" + flattened(package->application)] = seen;
    }
}

}  // namespace bai::batch
