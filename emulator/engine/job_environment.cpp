#include "emulator/engine/job_environment.h"

namespace bai::engine {
namespace {

using nlohmann::json;

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

std::string trim_trailing_slash(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

std::string segment_of(const json& properties) { return properties.value("jobOutputDirectoryPathSegment", ""); }

void add_gpu_variables(Environment& env, const NodeGpus& gpus) {
    std::vector<std::string> visible;
    for (size_t i = 0; i < gpus.uuids.size(); ++i) {
        visible.push_back(gpus.isolated ? std::to_string(i) : gpus.uuids[i]);
    }
    env["CUDA_VISIBLE_DEVICES"] = joined(visible, ",");
    env["NVIDIA_VISIBLE_DEVICES"] = gpus.uuids.empty() ? "none" : joined(gpus.uuids, ",");
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    env["AZ_BATCHAI_NUM_GPUS"] = std::to_string(gpus.uuids.size());
}

}  // namespace

Environment job_environment(const EnvironmentInputs& in) {
    const json& p = in.properties;
    Environment env;
    env["AZ_BATCHAI_MOUNT_ROOT"] = in.paths.mount_root;
    env["AZ_BATCHAI_JOB_MOUNT_ROOT"] = in.paths.job_mount_root;
    env["AZ_BATCHAI_JOB_TEMP_DIR"] = in.paths.job_temp_root;
    env["AZ_BATCHAI_JOB_TEMP"] = in.paths.job_temp;
    env["AZ_BATCHAI_SHARED_JOB_TEMP"] = in.paths.shared_job_temp;
    env["AZ_BATCHAI_MPI_HOST_FILE"] = in.paths.hostfile;
    env["AZ_BATCH_HOST_LIST"] = joined(in.host_list, ",");
    add_gpu_variables(env, in.gpus);
    env["AZ_BATCHAI_STDOUTERR_DIR"] = stdouterr_directory(p, env, in.preview_layout);
    for (const json& input : p.value("inputDirectories", json::array())) {
        if (!input.is_object() || !input.contains("id")) continue;
        env["AZ_BATCHAI_INPUT_" + input["id"].get<std::string>()] = expand_variables(input.value("path", ""), env);
    }
    for (const json& output : p.value("outputDirectories", json::array())) {
        if (!output.is_object() || !output.contains("id")) continue;
        env["AZ_BATCHAI_OUTPUT_" + output["id"].get<std::string>()] = output_directory(p, output, env);
    }
    add_user_variables(env, p.value("environmentVariables", json::array()));
    add_user_variables(env, p.value("secrets", json::array()));
    return env;
}

std::string stdouterr_directory(const json& properties, const Environment& env, bool preview_layout) {
    std::string prefix = trim_trailing_slash(expand_variables(properties.value("stdOutErrPathPrefix", ""), env));
    if (preview_layout) return prefix + "/" + segment_of(properties);
    return prefix + "/" + segment_of(properties) + "/stdouterr";
}

std::string output_directory(const json& properties, const json& output, const Environment& env) {
    std::string dir = trim_trailing_slash(expand_variables(output.value("pathPrefix", ""), env)) + "/" +
                      segment_of(properties) + "/outputs";
    std::string suffix = expand_variables(output.value("pathSuffix", ""), env);
    while (!suffix.empty() && suffix.front() == '/') suffix.erase(0, 1);
    suffix = trim_trailing_slash(suffix);
    if (!suffix.empty() && suffix != "/") dir += "/" + suffix;
    return dir;
}

void add_user_variables(Environment& env, const json& list) {
    if (!list.is_array()) return;
    for (const json& item : list) {
        if (!item.is_object() || !item.contains("name")) continue;
        env[item["name"].get<std::string>()] = item.value("value", "");
    }
}

}  // namespace bai::engine
