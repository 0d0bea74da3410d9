#include "tools/bai/job_lint.h"

#include <regex>
#include <set>

#include "emulator/validation/vm_sizes.h"
#include "tools/bai/json_fields.h"

namespace bai::cli {
namespace {

using nlohmann::json;
using validation::Finding;

const char* const kToolkits[] = {"cntkSettings", "pyTorchSettings", "tensorFlowSettings", "caffeSettings",
                                 "caffe2Settings", "chainerSettings", "customToolkitSettings", "customMpiSettings",
                                 "horovodSettings"};

const std::set<std::string> kServiceVariables = {
    "AZ_BATCHAI_MOUNT_ROOT",     "AZ_BATCHAI_JOB_MOUNT_ROOT",     "AZ_BATCHAI_JOB_TEMP",
    "AZ_BATCHAI_JOB_TEMP_DIR",   "AZ_BATCHAI_SHARED_JOB_TEMP",    "AZ_BATCHAI_STDOUTERR_DIR",
    "AZ_BATCHAI_MPI_HOST_FILE",  "AZ_BATCHAI_NUM_GPUS",           "AZ_BATCHAI_TASK_INDEX",
    "AZ_BATCHAI_PS_HOSTS",       "AZ_BATCHAI_WORKER_HOSTS",       "AZ_BATCHAI_PYTORCH_INIT_METHOD",
    "AZ_BATCHAI_PYTORCH_BACKEND"};

bool starts_with_any(const std::string& text, std::initializer_list<const char*> prefixes) {
    for (const char* p : prefixes) {
        if (text.rfind(p, 0) == 0) return true;
    }
    return false;
}

bool on_a_mount(const std::string& path) {
    return starts_with_any(path, {"$AZ_BATCHAI_MOUNT_ROOT", "${AZ_BATCHAI_MOUNT_ROOT}", "$AZ_BATCHAI_JOB_MOUNT_ROOT",
                                  "${AZ_BATCHAI_JOB_MOUNT_ROOT}", "/mnt/batch/tasks/shared/LS_root/mounts"});
}

bool on_a_mount_or_input(const std::string& path) {
    return on_a_mount(path) || starts_with_any(path, {"$AZ_BATCHAI_INPUT_", "${AZ_BATCHAI_INPUT_"});
}

void check_image(const json& p, std::vector<Finding>& out) {
    if (!p.contains("containerSettings") || !p["containerSettings"].is_object()) return;
    const json& registry = p["containerSettings"].value("imageSourceRegistry", json::object());
    std::string image = string_field(registry, "image");
    if (image.empty() || image.find('@') != std::string::npos) return;
    size_t slash = image.find_last_of('/');
    std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
    size_t colon = last.find(':');
    std::string path = "properties.containerSettings.imageSourceRegistry.image";
    if (colon == std::string::npos) {
        out.push_back({path, "\"" + image + "\" has no tag: the nodes pull :latest, which changes under you; pin a tag or a digest"});
    } else if (last.substr(colon + 1) == "latest") {
        out.push_back({path, "\"" + image + "\" uses :latest, which changes under you; pin a tag or a digest"});
    }
}

void check_gpu_workers(const json& p, const LintOptions& options, std::vector<Finding>& out) {
    if (options.vm_size.empty()) return;
    auto size = validation::find_vm_size(options.vm_size);
    if (!size || size->gpus == 0) return;
    long long nodes = p.contains("nodeCount") && p["nodeCount"].is_number_integer() ? p["nodeCount"].get<long long>() : 1;
    for (const char* toolkit : kToolkits) {
        if (!p.contains(toolkit) || !p[toolkit].is_object()) continue;
        const json& t = p[toolkit];
        const char* key = t.contains("workerCount") ? "workerCount" : "processCount";
        if (!t.contains(key) || !t[key].is_number_integer()) continue;
        long long workers = t[key].get<long long>();
        if (workers > nodes * size->gpus) {
            out.push_back({std::string("properties.") + toolkit + "." + key,
                           std::to_string(workers) + " workers on " + std::to_string(nodes) + " node(s) of " +
                               std::string(size->name) + " (" + std::to_string(size->gpus) +
                               " GPU(s) each): some workers share a GPU or get none"});
        }
    }
}

void check_output_paths(const json& p, std::vector<Finding>& out) {
    std::string std_out_err = string_field(p, "stdOutErrPathPrefix");
    if (!std_out_err.empty() && !on_a_mount(std_out_err)) {
        out.push_back({"properties.stdOutErrPathPrefix",
                       "\"" + std_out_err + "\" is on no mounted volume: the logs stay on the node and `job file` cannot list them"});
    }
    if (!p.contains("outputDirectories") || !p["outputDirectories"].is_array()) return;
    for (size_t i = 0; i < p["outputDirectories"].size(); ++i) {
        std::string prefix = string_field(p["outputDirectories"][i], "pathPrefix");
        if (!prefix.empty() && !on_a_mount(prefix)) {
            out.push_back({"properties.outputDirectories[" + std::to_string(i) + "].pathPrefix",
                           "\"" + prefix + "\" is on no mounted volume: the outputs are lost with the node"});
        }
    }
}

std::set<std::string> declared_variables(const json& p) {
    std::set<std::string> names = kServiceVariables;
    for (const auto& [list, prefix] : {std::pair{"inputDirectories", "AZ_BATCHAI_INPUT_"},
                                       std::pair{"outputDirectories", "AZ_BATCHAI_OUTPUT_"}}) {
        if (!p.contains(list) || !p[list].is_array()) continue;
        for (const json& d : p[list]) {
            std::string id = string_field(d, "id");
            if (!id.empty()) names.insert(prefix + id);
        }
    }
    for (const char* list : {"environmentVariables", "secrets"}) {
        if (!p.contains(list) || !p[list].is_array()) continue;
        for (const json& v : p[list]) names.insert(string_field(v, "name"));
    }
    return names;
}

void check_variables(const json& value, const std::string& path, const std::set<std::string>& known,
                     std::vector<Finding>& out) {
    if (value.is_object()) {
        for (const auto& [key, item] : value.items()) check_variables(item, path + "." + key, known, out);
    } else if (value.is_array()) {
        for (size_t i = 0; i < value.size(); ++i) check_variables(value[i], path + "[" + std::to_string(i) + "]", known, out);
    } else if (value.is_string()) {
        static const std::regex reference(R"(\$\{?(AZ_BATCHAI_[A-Za-z0-9_]+))");
        std::string text = value.get<std::string>();
        for (std::sregex_iterator it(text.begin(), text.end(), reference), end; it != end; ++it) {
            std::string name = (*it)[1];
            if (known.count(name) == 0) {
                out.push_back({path, "$" + name + " is not set by the service (nor declared by an input or output "
                                      "directory, or an environment variable): it expands to nothing"});
            }
        }
    }
}

void check_scripts(const json& p, std::vector<Finding>& out) {
    bool container = p.contains("containerSettings") && p["containerSettings"].is_object();
    bool preparation = p.contains("jobPreparation") && p["jobPreparation"].is_object();
    for (const char* toolkit : kToolkits) {
        if (!p.contains(toolkit) || !p[toolkit].is_object()) continue;
        for (const char* key : {"pythonScriptFilePath", "configFilePath"}) {
            std::string script = string_field(p[toolkit], key);
            if (script.empty() || on_a_mount_or_input(script)) continue;
            // A job preparation may fetch the script into the job's temporary directories.
            if (preparation && starts_with_any(script, {"$AZ_BATCHAI_JOB_TEMP", "${AZ_BATCHAI_JOB_TEMP",
                                                        "$AZ_BATCHAI_SHARED_JOB_TEMP", "${AZ_BATCHAI_SHARED_JOB_TEMP"})) {
                continue;
            }
            out.push_back({std::string("properties.") + toolkit + "." + key,
                           "\"" + script + "\" is on no mounted volume nor an input directory" +
                               (container ? " (fine only if the image has it)" : ": the nodes will not find it")});
        }
    }
}

}  // namespace

std::vector<Finding> lint_job(const json& body, const LintOptions& options) {
    std::vector<Finding> out;
    if (!body.is_object() || !body.contains("properties") || !body["properties"].is_object()) return out;
    const json& p = body["properties"];
    check_image(p, out);
    check_gpu_workers(p, options, out);
    check_output_paths(p, out);
    check_variables(p, "properties", declared_variables(p), out);
    check_scripts(p, out);
    return out;
}

std::string hint_for(const Finding& f) {
    const std::string& m = f.message;
    std::string field = f.path.substr(f.path.find_last_of('.') == std::string::npos ? 0 : f.path.find_last_of('.') + 1);
    if (m == "is required") return "add \"" + field + "\"";
    if (m.rfind("must be one of", 0) == 0) return "use one of the listed values";
    if (m.find("is not a duration") != std::string::npos) return "write \"P7D\", \"PT1H30M\" or \"1.06:00:00\"";
    if (m.find("is not valid JSON") != std::string::npos) return "fix the JSON at the line and column given";
    if (m.rfind("must be an integer", 0) == 0 || m.rfind("must be a number", 0) == 0) return "write a number, without quotes";
    if (m.rfind("must be a string", 0) == 0) return "write it in double quotes";
    if (m.rfind("must be an object", 0) == 0) return "write { ... } with its properties";
    if (m.rfind("must be an array", 0) == 0) return "write [ ... ], even for one item";
    if (m.find("toolkit") != std::string::npos) return "keep exactly one of the *Settings blocks";
    if (m.rfind("must be at least", 0) == 0 || m.rfind("must not be negative", 0) == 0) return "raise the number";
    if (m.rfind("gives both", 0) == 0) return "keep only one of the two";
    if (m.rfind("needs", 0) == 0) return "add what it names";
    if (m.find("is more than") != std::string::npos || m.find("is less than") != std::string::npos ||
        m.find("is longer than") != std::string::npos) {
        return "bring it within the limit the message names";
    }
    if (m.find("octal") != std::string::npos) return "write the mode as a string such as \"0755\"";
    if (f.path.ends_with("vmSize")) return "use a size Batch AI offered, such as STANDARD_NC6 or STANDARD_D1_V2";
    if (m.find("is used twice") != std::string::npos) return "give each directory its own id";
    if (m.find("file.core.windows.net") != std::string::npos) {
        return "write https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/SHARE";
    }
    return "see " + f.path + " in the JobCreateParameters schema (shared/reference/schemas)";
}

}  // namespace bai::cli
