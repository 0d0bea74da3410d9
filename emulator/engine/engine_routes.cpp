#include "emulator/engine/engine_routes.h"

#include <nlohmann/json.hpp>

namespace bai::engine {

namespace {

void send_error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    res.set_content(nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(), "application/json");
}

}  // namespace

void add_engine_routes(httplib::Server& server, LocalEngine& engine) {
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
}

}  // namespace bai::engine
