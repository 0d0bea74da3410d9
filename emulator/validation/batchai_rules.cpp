#include "emulator/validation/batchai_rules.h"

#include <strings.h>

#include <regex>
#include <set>

#include "emulator/validation/duration.h"
#include "emulator/validation/swagger_definitions.h"
#include "emulator/validation/vm_sizes.h"

namespace bai::validation {
namespace {

using nlohmann::json;

const std::string kRoot = "properties";

void error(Report& r, const std::string& path, const std::string& message) {
    r.errors.push_back({path, message});
}
void warning(Report& r, const std::string& path, const std::string& message) {
    r.warnings.push_back({path, message});
}

bool has_string(const json& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_string() && !o[key].get<std::string>().empty();
}

std::optional<long long> integer(const json& o, const char* key) {
    if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return std::nullopt;
    return o[key].get<long long>();
}

bool equals_ci(const json& o, const char* key, const char* expected) {
    return has_string(o, key) && strcasecmp(o[key].get<std::string>().c_str(), expected) == 0;
}

// Exactly one of `a` and `b` (e.g. a secret's value or its Key Vault reference).
void one_of(const json& o, const char* a, const char* b, const std::string& path, Report& r) {
    bool has_a = o.is_object() && o.contains(a) && !o[a].is_null();
    bool has_b = o.is_object() && o.contains(b) && !o[b].is_null();
    if (has_a == has_b) {
        error(r, path, std::string(has_a ? "gives both " : "needs one of ") + a + " and " + b);
    }
}

void check_mount_volumes(const json& volumes, const std::string& path, Mode mode, Report& r) {
    if (!volumes.is_object()) return;
    for (const char* kind : {"azureFileShares", "azureBlobFileSystems", "fileServers", "unmanagedFileSystems"}) {
        if (!volumes.contains(kind) || !volumes[kind].is_array()) continue;
        const json& list = volumes[kind];
        for (size_t i = 0; i < list.size(); ++i) {
            std::string item = path + "." + kind + "[" + std::to_string(i) + "]";
            const json& v = list[i];
            if (!v.is_object()) continue;
            if (v.contains("relativeMountPath") && v["relativeMountPath"].is_string()) {
                std::string p = v["relativeMountPath"].get<std::string>();
                if (p.empty()) error(r, item + ".relativeMountPath", "must not be empty");
                if (p.find("..") != std::string::npos || (!p.empty() && p[0] == '/')) {
                    error(r, item + ".relativeMountPath", "must be a relative path inside the mount root: \"" + p + "\"");
                }
            }
            if (v.contains("credentials") && v["credentials"].is_object()) {
                const json& c = v["credentials"];
                bool given = (c.contains("accountKey") && !c["accountKey"].is_null()) ||
                             (c.contains("accountKeySecretReference") && !c["accountKeySecretReference"].is_null());
                // The az CLI fills a missing key from --storage-account-key or the environment.
                if (mode == Mode::rest || given) {
                    one_of(c, "accountKey", "accountKeySecretReference", item + ".credentials", r);
                }
            }
            for (const char* mode_key : {"fileMode", "directoryMode"}) {
                if (has_string(v, mode_key) &&
                    !std::regex_match(v[mode_key].get<std::string>(), std::regex("0?[0-7]{3}"))) {
                    error(r, item + "." + mode_key, "must be an octal mode such as \"0777\"");
                }
            }
            if (std::string(kind) == "azureFileShares" && has_string(v, "azureFileUrl")) {
                std::string url = v["azureFileUrl"].get<std::string>();
                bool placeholder = url.find("<AZURE_BATCHAI_STORAGE_ACCOUNT>") != std::string::npos;
                // The service took any string here at create, and the nodes failed to mount it
                // (recorded): a warning, for `bai job validate`, not a refusal.
                if (!placeholder && !std::regex_match(url, std::regex("https?://[^/]+/[^/]+/?.*"))) {
                    warning(r, item + ".azureFileUrl",
                            "is not https://ACCOUNT.file.core.windows.net/SHARE: the service accepts it, "
                            "and the nodes fail to mount it");
                }
            }
        }
    }
}

void check_directories(const json& p, Report& r) {
    std::set<std::string> ids;
    for (const char* kind : {"inputDirectories", "outputDirectories"}) {
        if (!p.contains(kind) || !p[kind].is_array()) continue;
        for (size_t i = 0; i < p[kind].size(); ++i) {
            const json& d = p[kind][i];
            if (!has_string(d, "id")) continue;
            std::string id = d["id"].get<std::string>();
            std::string path = kRoot + "." + kind + "[" + std::to_string(i) + "].id";
            // The id becomes AZ_BATCHAI_INPUT_<ID> / AZ_BATCHAI_OUTPUT_<ID>.
            if (!std::regex_match(id, std::regex("[A-Za-z0-9_]+"))) {
                error(r, path, "must be letters, digits and underscores (it names AZ_BATCHAI_" +
                                   std::string(kind[0] == 'i' ? "INPUT" : "OUTPUT") + "_" + id + ")");
            }
            std::string key = std::string(kind).substr(0, 1) + id;
            if (!ids.insert(key).second) error(r, path, "\"" + id + "\" is used twice");
        }
    }
}

// Whether the API version has the toolkit at all (customMpiSettings and horovodSettings came with
// 2018-05-01): one it lacks is an unknown property, which the service ignored.
bool version_has(ApiVersion version, const char* toolkit) {
    const json& defs = definitions(version);
    return defs.contains("JobBaseProperties") && defs["JobBaseProperties"]["properties"].contains(toolkit);
}

void check_toolkit(const json& p, ApiVersion version, Report& r) {
    std::vector<std::string> present;
    for (const char* t : kToolkits) {
        if (p.contains(t) && !p[t].is_null() && version_has(version, t)) present.push_back(t);
    }
    if (present.empty()) {
        error(r, kRoot, "needs one toolkit: cntkSettings, pyTorchSettings, tensorFlowSettings, caffeSettings, "
                        "caffe2Settings, chainerSettings, customToolkitSettings" +
                            std::string(version_has(version, "customMpiSettings") ? ", customMpiSettings or horovodSettings" : ""));
        return;
    }
    if (present.size() > 1) {
        error(r, kRoot + "." + present[1], "only one toolkit may be given; " + present[0] + " is given too");
    }
    long long nodes = integer(p, "nodeCount").value_or(1);
    for (const std::string& t : present) {
        const json& s = p[t];
        std::string path = kRoot + "." + t;
        if (auto count = integer(s, "processCount"); count && *count < 1) {
            error(r, path + ".processCount", "must be at least 1");
        }
        if (t == "tensorFlowSettings") {
            auto ps = integer(s, "parameterServerCount");
            auto workers = integer(s, "workerCount");
            if (ps && *ps < 0) error(r, path + ".parameterServerCount", "must not be negative");
            if (ps && *ps > nodes) {
                error(r, path + ".parameterServerCount", "is more than nodeCount (" + std::to_string(nodes) +
                                                             "): at most one parameter server per node");
            }
            if (workers && *workers < 1) error(r, path + ".workerCount", "must be at least 1");
            bool distributed = (ps && *ps > 0) || (workers && *workers > 1) || nodes > 1;
            if (!distributed && (s.contains("workerCommandLineArgs") || s.contains("parameterServerCommandLineArgs"))) {
                warning(r, path, "worker and parameter server arguments are used only by distributed jobs");
            }
            if (distributed && !s.contains("workerCount")) {
                warning(r, path + ".workerCount", "is not given for a distributed job; the service uses nodeCount");
            }
        }
        if (t == "cntkSettings") {
            // The recipes give a Python script without languageType: the language follows from
            // the fields unless languageType says otherwise.
            bool config = s.contains("configFilePath");
            bool script = s.contains("pythonScriptFilePath");
            bool says_python = equals_ci(s, "languageType", "python");
            bool says_brainscript = equals_ci(s, "languageType", "brainscript");
            if (has_string(s, "languageType") && !says_python && !says_brainscript) {
                error(r, path + ".languageType", "must be BrainScript or Python");
            }
            if (config && script) {
                error(r, path, "gives both configFilePath (BrainScript) and pythonScriptFilePath (Python)");
            } else if (!config && !script) {
                error(r, path, "needs configFilePath (BrainScript) or pythonScriptFilePath (Python)");
            } else if (says_python && config) {
                error(r, path + ".configFilePath", "is for BrainScript; languageType is Python");
            } else if (says_brainscript && script) {
                error(r, path + ".pythonScriptFilePath", "is for Python; languageType is BrainScript");
            }
            if (s.contains("pythonInterpreterPath") && !script) {
                error(r, path + ".pythonInterpreterPath", "is only used with pythonScriptFilePath");
            }
        }
        if (t == "caffeSettings") {
            bool config = s.contains("configFilePath");
            bool script = s.contains("pythonScriptFilePath");
            if (config == script) {
                error(r, path, config ? "gives both configFilePath and pythonScriptFilePath"
                                      : "needs configFilePath or pythonScriptFilePath");
            }
            if (s.contains("pythonInterpreterPath") && !script) {
                error(r, path + ".pythonInterpreterPath", "is only used with pythonScriptFilePath");
            }
        }
    }
}

}  // namespace

void check_job_rules(const json& p, ApiVersion version, Mode mode, Report& r) {
    if (!p.is_object()) return;
    if (auto nodes = integer(p, "nodeCount"); nodes && *nodes < 1) {
        error(r, kRoot + ".nodeCount", "must be at least 1");
    }
    check_toolkit(p, version, r);
    check_directories(p, r);
    if (p.contains("mountVolumes")) check_mount_volumes(p["mountVolumes"], kRoot + ".mountVolumes", mode, r);
    if (p.contains("constraints") && has_string(p["constraints"], "maxWallClockTime")) {
        auto d = parse_duration(p["constraints"]["maxWallClockTime"].get<std::string>());
        if (d && *d > std::chrono::hours(24 * 7)) {
            error(r, kRoot + ".constraints.maxWallClockTime", "is longer than the 7 days a job may run");
        }
        if (d && d->count() <= 0) error(r, kRoot + ".constraints.maxWallClockTime", "must be positive");
    }
    if (p.contains("containerSettings") && p["containerSettings"].is_object()) {
        const json& c = p["containerSettings"];
        if (has_string(c, "shmSize") &&
            !std::regex_match(c["shmSize"].get<std::string>(),
                              std::regex("[0-9]+(\\.[0-9]+)? ?([kKmMgGtTpP])?[iI]?[bB]?"))) {
            // Docker's --shm-size syntax.
            error(r, kRoot + ".containerSettings.shmSize", "must be a size such as \"2g\", \"512m\" or \"16gb\"");
        }
        if (c.contains("imageSourceRegistry") && c["imageSourceRegistry"].contains("credentials")) {
            one_of(c["imageSourceRegistry"]["credentials"], "password", "passwordSecretReference",
                   kRoot + ".containerSettings.imageSourceRegistry.credentials", r);
        }
    }
    if (p.contains("secrets") && p["secrets"].is_array()) {
        for (size_t i = 0; i < p["secrets"].size(); ++i) {
            one_of(p["secrets"][i], "value", "valueSecretReference",
                   kRoot + ".secrets[" + std::to_string(i) + "]", r);
        }
    }
}

void check_vm_size(const json& p, Report& r) {
    if (!p.is_object() || !p.contains("vmSize") || !p["vmSize"].is_string()) return;
    if (std::string problem = vm_size_problem(p["vmSize"].get<std::string>()); !problem.empty()) {
        error(r, kRoot + ".vmSize", problem);
    }
}

void check_cluster_rules(const json& p, Mode mode, Report& r) {
    if (!p.is_object()) return;
    check_vm_size(p, r);
    if (p.contains("scaleSettings") && p["scaleSettings"].is_object()) {
        const json& s = p["scaleSettings"];
        bool manual = s.contains("manual") && !s["manual"].is_null();
        bool autoscale = s.contains("autoScale") && !s["autoScale"].is_null();
        if (manual == autoscale) {
            error(r, kRoot + ".scaleSettings", manual ? "gives both manual and autoScale" : "needs manual or autoScale");
        }
        if (manual) {
            if (auto n = integer(s["manual"], "targetNodeCount"); n && *n < 0) {
                error(r, kRoot + ".scaleSettings.manual.targetNodeCount", "must not be negative");
            }
        }
        if (autoscale) {
            const json& a = s["autoScale"];
            auto min = integer(a, "minimumNodeCount");
            auto max = integer(a, "maximumNodeCount");
            auto initial = integer(a, "initialNodeCount");
            if (min && *min < 0) error(r, kRoot + ".scaleSettings.autoScale.minimumNodeCount", "must not be negative");
            if (min && max && *max < *min) {
                error(r, kRoot + ".scaleSettings.autoScale.maximumNodeCount", "is less than minimumNodeCount");
            }
            if (initial && ((min && *initial < *min) || (max && *initial > *max))) {
                warning(r, kRoot + ".scaleSettings.autoScale.initialNodeCount",
                        "is outside minimumNodeCount..maximumNodeCount");
            }
        }
    }
    if (p.contains("userAccountSettings") && p["userAccountSettings"].is_object()) {
        const json& u = p["userAccountSettings"];
        if (!u.contains("adminUserSshPublicKey") && !u.contains("adminUserPassword") && mode == Mode::rest) {
            error(r, kRoot + ".userAccountSettings", "needs adminUserSshPublicKey or adminUserPassword");
        }
    }
    if (p.contains("nodeSetup") && p["nodeSetup"].is_object() && p["nodeSetup"].contains("mountVolumes")) {
        check_mount_volumes(p["nodeSetup"]["mountVolumes"], kRoot + ".nodeSetup.mountVolumes", mode, r);
    }
}

}  // namespace bai::validation
