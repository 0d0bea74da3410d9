// The Batch API's pool actions beyond add, patch and resize: stop resize, update properties (a
// pool's replaceable settings), the account's node counts per pool, and the images the service
// supports.
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/work_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

// The service's node-count keys for the emulator's node states (camel case where it writes so).
const std::pair<const char*, const char*> kCountedStates[] = {
    {"creating", "creating"},       {"idle", "idle"},
    {"leavingpool", "leavingPool"}, {"offline", "offline"},
    {"preempted", "preempted"},     {"rebooting", "rebooting"},
    {"reimaging", "reimaging"},     {"running", "running"},
    {"starting", "starting"},       {"starttaskfailed", "startTaskFailed"},
    {"unusable", "unusable"},       {"unknown", "unknown"},
    {"waitingforstarttask", "waitingForStartTask"}};

json zero_counts(bool with_upgrading) {
    json counts = json::object();
    for (const auto& [state, key] : kCountedStates) counts[key] = 0;
    if (with_upgrading) counts["upgradingOS"] = 0;
    counts["total"] = 0;
    return counts;
}

// The images a pool may name, as the service lists them (lower-case names, as its answers
// show). Nodes run on this machine (or in a local root given with --image) whatever the image.
json supported_images() {
    auto image = [](const char* publisher, const char* offer, const char* sku, const char* agent, const char* os) {
        return json{{"imageReference", {{"publisher", publisher}, {"offer", offer}, {"sku", sku}, {"version", "latest"}}},
                    {"verificationType", "verified"},
                    {"nodeAgentSKUId", agent},
                    {"osType", os}};
    };
    return json::array({
        image("canonical", "0001-com-ubuntu-server-focal", "20_04-lts", "batch.node.ubuntu 20.04", "linux"),
        image("canonical", "0001-com-ubuntu-server-jammy", "22_04-lts", "batch.node.ubuntu 22.04", "linux"),
        image("canonical", "ubuntuserver", "18.04-lts", "batch.node.ubuntu 18.04", "linux"),
        image("microsoft-azure-batch", "ubuntu-server-container", "20-04-lts", "batch.node.ubuntu 20.04", "linux"),
        image("microsoft-dsvm", "ubuntu-hpc", "2004", "batch.node.ubuntu 20.04", "linux"),
        image("openlogic", "centos", "7_9", "batch.node.centos 7", "linux"),
        image("microsoftwindowsserver", "windowsserver", "2019-datacenter", "batch.node.windows amd64", "windows"),
        image("microsoftwindowsserver", "windowsserver", "2022-datacenter", "batch.node.windows amd64", "windows"),
    });
}

}  // namespace

void BatchApi::serve_pool_actions(http::Routes& server) {
    route(server, "POST", R"(/pools/([^/]+)/stopresize)", [this](auto& a, auto& q, auto& r) { stop_resize(a, q, r); });
    route(server, "POST", R"(/pools/([^/]+)/updateproperties)",
          [this](auto& a, auto& q, auto& r) { update_pool_properties(a, q, r); });
    route(server, "GET", "/nodecounts", [this](auto& a, auto& q, auto& r) { list_node_counts(a, q, r); });
    route(server, "GET", "/supportedimages", [this](auto&, auto& q, auto& r) {
        send_computed_list(q, r, supported_images(), base_url(q) + "/$metadata#supportedimages");
    });
}

// The service stops the pool where it is: no more nodes join or leave for the targets (which
// stay as they were), `stopping` then `steady` with a ResizeStopped error while short of them.
// On a steady pool there is nothing to stop: 202 all the same (a choice).
void BatchApi::stop_resize(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    StoredEntity pool = need_pool(account, id);
    check_conditions(req, pool);
    if (pool.body.value("state", "") == "deleting") throw BatchError(409, "PoolBeingDeleted", "The specified pool is being deleted.");
    std::optional<StoredEntity> updated = store_.update(account.name, kPools, id, [&](json& doc) {
        if (doc.value("allocationState", "") != "resizing") return false;
        doc["_resizeStopped"] = true;
        doc["allocationState"] = "stopping";
        doc["allocationStateTransitionTime"] = time::format_iso8601(time::now());
        return true;
    });
    nodes_.pool_changed(account.name, id);
    if (updated) set_entity_headers(res, *updated);
    res.status = 202;
}

// What the service replaces: certificateReferences, applicationPackageReferences and metadata
// (required, an empty list clears them), startTask (absent: removed), targetNodeCommunicationMode.
void BatchApi::update_pool_properties(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json body = parse_body(req);
    const std::string id = req.matches[1];
    need_pool(account, id);
    for (const char* required : {"certificateReferences", "applicationPackageReferences", "metadata"}) {
        if (!body.contains(required)) throw missing_property(required);
        if (!body[required].is_array()) throw invalid_property(required, body[required].dump(), "The value must be a list");
    }
    packages_.check_references(account.name, body["applicationPackageReferences"], "applicationPackageReferences");
    if (body.contains("startTask")) {
        const json& task = body["startTask"];
        if (!task.is_object() || !task.contains("commandLine") || !task["commandLine"].is_string()) {
            throw missing_property("startTask.commandLine");
        }
        check_task_lists(task, "startTask.");
    }
    for (const auto& [name, value] : body.items()) {
        if (name != "startTask" && name != "certificateReferences" && name != "applicationPackageReferences" &&
            name != "metadata" && name != "targetNodeCommunicationMode") {
            throw invalid_property(name, value.dump(), "This property cannot be replaced with updateproperties");
        }
    }
    refuse_unknown_properties(body, "PoolUpdatePropertiesParameter");
    std::optional<StoredEntity> updated = store_.update(account.name, kPools, id, [&](json& doc) {
        for (const char* replaced : {"startTask", "certificateReferences", "applicationPackageReferences", "metadata"}) {
            // The service shows no applicationPackageReferences once they are cleared (its
            // recordings show the cleared certificateReferences as []).
            const bool cleared = std::string(replaced) == "applicationPackageReferences" && body.contains(replaced) && body[replaced].empty();
            if (body.contains(replaced) && !cleared) {
                doc[replaced] = body[replaced];
            } else {
                doc.erase(replaced);
            }
        }
        if (body.contains("targetNodeCommunicationMode")) doc["targetNodeCommunicationMode"] = body["targetNodeCommunicationMode"];
        return true;
    });
    if (!updated) throw BatchError(404, "PoolNotFound", "The specified pool does not exist.");
    set_entity_headers(res, *updated);
    res.status = 204;
}

void BatchApi::list_node_counts(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    // The counts gained upgradingOS in later api-versions; older ones (the 2020 recordings') have none.
    const bool with_upgrading = req.get_param_value("api-version") >= "2021";
    json items = json::array();
    std::optional<std::string> next;
    for (const StoredEntity& pool : store_.list(account.name, kPools, "", 1000000, next)) {
        const std::string id = pool.body.value("id", "");
        json counts{{"poolId", id}, {"dedicated", zero_counts(with_upgrading)}, {"lowPriority", zero_counts(with_upgrading)}};
        for (const json& node : nodes_.nodes(account.name, id)) {
            json& side = counts[node.value("isDedicated", true) ? "dedicated" : "lowPriority"];
            const std::string state = node.value("state", "unknown");
            const char* key = "unknown";
            for (const auto& [from, to] : kCountedStates) {
                if (state == from) key = to;
            }
            side[key] = side[key].get<int>() + 1;
            side["total"] = side["total"].get<int>() + 1;
        }
        items.push_back(std::move(counts));
    }
    send_computed_list(req, res, items, base_url(req) + "/$metadata#poolnodecounts");
}

}  // namespace bai::batch
