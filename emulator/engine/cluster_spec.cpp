#include "emulator/engine/cluster_spec.h"

#include <stdexcept>

#include "common/text/ascii.h"

namespace bai::engine {

using nlohmann::json;

namespace {

int integer(const json& block, const char* field, int fallback) {
    return block.contains(field) && block[field].is_number_integer() ? block[field].get<int>() : fallback;
}

Deallocation deallocation(const json& manual) {
    std::string option = text::lower(manual.value("nodeDeallocationOption", "requeue"));
    if (option == "terminate") return Deallocation::terminate;
    if (option == "waitforjobcompletion") return Deallocation::wait_for_job_completion;
    return Deallocation::requeue;
}

}  // namespace

ClusterSpec read_cluster_spec(const json& cluster) {
    ClusterSpec spec;
    spec.id = cluster.value("id", "");
    spec.name = cluster.value("name", "");
    const json& p = cluster.at("properties");
    std::string size = p.value("vmSize", "");
    auto vm = validation::find_vm_size(size);
    if (!vm) throw std::invalid_argument("unknown vmSize " + size);
    spec.vm_size = *vm;
    spec.low_priority = text::lower(p.value("vmPriority", "dedicated")) == "lowpriority";
    const json scale = p.value("scaleSettings", json::object());
    if (scale.contains("autoScale") && scale["autoScale"].is_object()) {
        const json& a = scale["autoScale"];
        spec.auto_scale = AutoScale{integer(a, "minimumNodeCount", 0), integer(a, "maximumNodeCount", 0),
                                    integer(a, "initialNodeCount", 0)};
    } else {
        const json manual = scale.value("manual", json::object());
        spec.manual_target = integer(manual, "targetNodeCount", 0);
        spec.deallocation = deallocation(manual);
    }
    if (p.contains("nodeSetup") && p["nodeSetup"].is_object()) {
        const json& setup = p["nodeSetup"];
        if (setup.contains("setupTask") && setup["setupTask"].is_object()) spec.setup_task = setup["setupTask"];
        if (setup.contains("mountVolumes") && setup["mountVolumes"].is_object()) spec.mount_volumes = setup["mountVolumes"];
    }
    if (p.contains("userAccountSettings") && p["userAccountSettings"].is_object()) {
        const json& user = p["userAccountSettings"];
        auto text = [&](const char* field) {
            return user.contains(field) && user[field].is_string() ? user[field].get<std::string>() : std::string();
        };
        spec.admin_user = text("adminUserName");
        spec.admin_password = text("adminUserPassword");
        spec.admin_public_key = text("adminUserSshPublicKey");
    }
    return spec;
}

}  // namespace bai::engine
