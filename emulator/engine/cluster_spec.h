// What the engine reads from a cluster's document: the size of its nodes, their priority, how
// many there should be, what each runs when it joins, and what it mounts.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "emulator/validation/vm_sizes.h"

namespace bai::engine {

enum class Deallocation { requeue, terminate, wait_for_job_completion };

struct AutoScale {
    int minimum = 0;
    int maximum = 0;
    int initial = 0;
    // The most nodes auto-scale gives the cluster (never below the minimum).
    int ceiling() const { return std::max(minimum, maximum); }
};

struct ClusterSpec {
    std::string id;    // the ARM id as created
    std::string name;
    validation::VmSize vm_size{};
    bool low_priority = false;
    // Exactly one of: a manual target, or auto-scale bounds.
    std::optional<int> manual_target;
    std::optional<AutoScale> auto_scale;
    Deallocation deallocation = Deallocation::requeue;
    nlohmann::json setup_task;     // nodeSetup.setupTask, null when none
    nlohmann::json mount_volumes;  // nodeSetup.mountVolumes, null when none
    // userAccountSettings: who may log in to the nodes (an empty password or key: none).
    std::string admin_user;
    std::string admin_password;
    std::string admin_public_key;
};

// Throws std::invalid_argument when the document lacks what a cluster must have.
ClusterSpec read_cluster_spec(const nlohmann::json& cluster);

}  // namespace bai::engine
