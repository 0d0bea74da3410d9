// ARM paths of the Batch AI resources bai works on.
#pragma once

#include <string>

#include "common/text/percent_encoding.h"
#include "tools/bai/arm_client.h"

namespace bai::cli {

inline std::string workspace_path(const ArmClient& arm, const std::string& group, const std::string& workspace) {
    return batchai_path(arm, group) + "/workspaces/" + text::percent_encode(workspace);
}
inline std::string experiment_path(const ArmClient& arm, const std::string& group, const std::string& workspace,
                                   const std::string& experiment) {
    return workspace_path(arm, group, workspace) + "/experiments/" + text::percent_encode(experiment);
}
inline std::string job_path(const ArmClient& arm, const std::string& group, const std::string& workspace,
                            const std::string& experiment, const std::string& job) {
    return experiment_path(arm, group, workspace, experiment) + "/jobs/" + text::percent_encode(job);
}
inline std::string cluster_path(const ArmClient& arm, const std::string& group, const std::string& workspace,
                                const std::string& cluster) {
    return workspace_path(arm, group, workspace) + "/clusters/" + text::percent_encode(cluster);
}
inline std::string file_server_path(const ArmClient& arm, const std::string& group, const std::string& workspace,
                                    const std::string& name) {
    return workspace_path(arm, group, workspace) + "/fileServers/" + text::percent_encode(name);
}
// The flat resources of 2017-09-01-preview.
inline std::string preview_path(const ArmClient& arm, const std::string& group, const std::string& kind,
                                const std::string& name) {
    return batchai_path(arm, group) + "/" + kind + "/" + text::percent_encode(name);
}

}  // namespace bai::cli
