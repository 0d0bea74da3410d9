#include "emulator/engine/engine_routes.h"

#include <cerrno>
#include <nlohmann/json.hpp>

namespace bai::engine {

namespace {

void send_error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    res.set_content(nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(), "application/json");
}

nlohmann::json plan_json(const mounts::FaultPlan& plan) {
    nlohmann::json out{{"operations", plan.operations}, {"stallMs", plan.stall.count()}};
    out["error"] = plan.error == 0 ? nlohmann::json() : nlohmann::json(plan.error == EIO ? "EIO" : "ENOSPC");
    return out;
}

// The plan of a PUT body; throws std::invalid_argument naming the offending field.
mounts::FaultPlan parse_plan(const std::string& body) {
    nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
    if (!doc.is_object()) throw std::invalid_argument("the body must be a JSON object");
    mounts::FaultPlan plan;
    if (doc.contains("error") && !doc["error"].is_null()) {
        if (!doc["error"].is_string() || mounts::fault_errno(doc["error"].get<std::string>()) == 0) {
            throw std::invalid_argument("error must be \"EIO\" or \"ENOSPC\"");
        }
        plan.error = mounts::fault_errno(doc["error"].get<std::string>());
    }
    if (!doc.contains("operations") || !doc["operations"].is_number_integer() || doc["operations"].get<long long>() < 1 ||
        doc["operations"].get<long long>() > 1000000) {
        throw std::invalid_argument("operations must be an integer from 1 to 1000000");
    }
    plan.operations = doc["operations"].get<int>();
    if (doc.contains("stallMs")) {
        if (!doc["stallMs"].is_number_integer() || doc["stallMs"].get<long long>() < 0 ||
            doc["stallMs"].get<long long>() > 600000) {
            throw std::invalid_argument("stallMs must be an integer from 0 to 600000");
        }
        plan.stall = std::chrono::milliseconds(doc["stallMs"].get<long long>());
    }
    if (plan.error == 0 && plan.stall.count() == 0) throw std::invalid_argument("give an error, a stallMs, or both");
    return plan;
}

// /emulator/{shares|containers}/{account}/{name}/faults: the fault plan of a volume's mounts.
void add_fault_routes(http::Routes& server, LocalEngine& engine, const std::string& collection,
                      mounts::VolumeKind kind) {
    const std::string what = kind == mounts::VolumeKind::share ? "share" : "container";
    const std::string faults = "/emulator/" + collection + "/([^/]+)/([^/]+)/faults";
    server.Put(faults, [&engine, kind](const httplib::Request& req, httplib::Response& res) {
        try {
            mounts::FaultPlan plan = parse_plan(req.body);
            if (kind == mounts::VolumeKind::share && engine.binds_shares()) {
                return send_error(res, 409, "FaultPlansNeedFuseMounts",
                                  "Shares are bind mounts here (--share-mounts bind), which no fault plan can "
                                  "reach: start the emulator with --share-mounts fuse to inject faults");
            }
            engine.mount_faults().set(kind, req.matches[1], req.matches[2], plan);
            res.set_content(plan_json(plan).dump(), "application/json");
        } catch (const std::invalid_argument& e) {
            send_error(res, 400, "InvalidFaultPlan", e.what());
        }
    });
    server.Get(faults, [&engine, kind, what](const httplib::Request& req, httplib::Response& res) {
        std::optional<mounts::FaultPlan> plan = engine.mount_faults().get(kind, req.matches[1], req.matches[2]);
        if (!plan) return send_error(res, 404, "NoFaultPlan", "No faults are planned for that " + what);
        res.set_content(plan_json(*plan).dump(), "application/json");
    });
    server.Delete(faults, [&engine, kind](const httplib::Request& req, httplib::Response& res) {
        engine.mount_faults().clear(kind, req.matches[1], req.matches[2]);
        res.status = 204;
    });
}

}  // namespace

void add_engine_routes(http::Routes& server, LocalEngine& engine) {
    server.Get("/emulator/nodes", [&engine](const httplib::Request&, httplib::Response& res) {
        res.set_content(nlohmann::json{{"value", engine.nodes()}}.dump(), "application/json");
    });
    server.Post(R"(/emulator/nodes/([^/]+)/preempt)", [&engine](const httplib::Request& req, httplib::Response& res) {
        const std::string node = req.matches[1];
        try {
            std::optional<nlohmann::json> done = engine.preempt(node);
            if (!done) return send_error(res, 404, "NodeNotFound", "There is no node " + node);
            res.set_content(done->dump(), "application/json");
        } catch (const std::invalid_argument& e) {
            send_error(res, 400, "NodeNotLowPriority", e.what());
        } catch (const std::exception& e) {
            send_error(res, 503, "EngineUnavailable", e.what());
        }
    });
    add_fault_routes(server, engine, "shares", mounts::VolumeKind::share);
    add_fault_routes(server, engine, "containers", mounts::VolumeKind::container);
}

}  // namespace bai::engine
