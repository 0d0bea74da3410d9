// Where a job command acts: an experiment of a workspace (2018-05-01), or, with no workspace
// given nor set as a default, the resource group itself (the flat jobs of 2017-09-01-preview).
#pragma once

#include <optional>
#include <string>

#include "tools/bai/cli_error.h"
#include "tools/bai/command_context.h"
#include "tools/bai/resource_paths.h"

namespace bai::cli {

struct JobScope {
    std::string group;
    std::optional<std::string> workspace;
    std::string experiment;

    static JobScope resolve(CommandContext& ctx, const std::string& group, const std::string& workspace,
                            const std::string& experiment) {
        JobScope s{ctx.require(group, "group", "--resource-group/-g"), ctx.optional(workspace, "workspace"), ""};
        if (s.workspace) s.experiment = ctx.require(experiment, "experiment", "--experiment/-e");
        return s;
    }
    bool preview() const { return !workspace; }
    const char* api() const { return workspace ? kApi : kPreviewApi; }
    std::string path(ArmClient& arm, const std::string& job) const {
        return workspace ? job_path(arm, group, *workspace, experiment, job) : preview_path(arm, group, "jobs", job);
    }
    std::string list_path(ArmClient& arm) const {
        return workspace ? experiment_path(arm, group, *workspace, experiment) + "/jobs"
                         : batchai_path(arm, group) + "/jobs";
    }
    std::string cluster_id(ArmClient& arm, const std::string& cluster) const {
        return workspace ? cluster_path(arm, group, *workspace, cluster) : preview_path(arm, group, "clusters", cluster);
    }
};

// The job's executionState in lower case (the preview API wrote "Succeeded", 2018-05-01 "succeeded").
inline std::string execution_state(const nlohmann::json& job) {
    std::string state = job.is_object() && job.contains("properties") ? job["properties"].value("executionState", "") : "";
    for (char& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return state;
}

inline bool job_finished(const nlohmann::json& job) {
    std::string state = execution_state(job);
    return state == "succeeded" || state == "failed";
}

}  // namespace bai::cli
