// libFuzzer: the portal's actions endpoint (POST /portal/api/actions): the token and origin
// checks and the body's fields, in front of a stand-in ARM (answers 202) and engine; and its
// Batch reads (GET /portal/api/batch/read?path=), in front of a stand-in Batch API that records
// the paths it is asked for: only the pages' own reads may reach it.
// The first byte picks the endpoint (bit 4) and the headers (token right or wrong, an Origin or
// not); the rest is the body, or the path.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>

#include "emulator/portal/portal_actions.h"
#include "emulator/portal/portal_batch.h"

namespace {

struct Fixture {
    bai::http::Routes arm;
    bai::http::Routes portal;
    Fixture() {
        auto answer = [](const httplib::Request&, httplib::Response& res) {
            res.status = 202;
            res.set_content("{}", "application/json");
        };
        arm.Post(".*", answer).Put(".*", answer).Patch(".*", answer).Delete(".*", answer);
        auto preempt = [](const std::string& node) -> std::optional<nlohmann::json> {
            if (node == "dedicated") throw std::invalid_argument("node dedicated is not low-priority");
            if (node == "n1") return nlohmann::json{{"nodeId", node}};
            return std::nullopt;
        };
        bai::portal::add_action_routes(portal, {arm, preempt, preempt, "token"});
        batch.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
            asked = req.path;
            res.set_content(R"({"value": []})", "application/json");
        });
        bai::portal::add_batch_routes(portal, {batch, accounts, nullptr, "127.0.0.1:2"});
    }
    bai::http::Routes batch;
    bai::batch::BatchAccountRegistry accounts{{{"acct", "a2V5", ""}}};
    std::string asked;
};

// The paths the portal's Batch pages read: /pools, /jobs, one of them, a pool's nodes, a job's
// tasks, one of those, and a node's or task's file below it.
bool allowed_batch_path(const std::string& path) {
    static const std::regex allowed(
        R"(/acct/(pools|jobs)(/[A-Za-z0-9_:-]+(/(nodes|tasks)(/[A-Za-z0-9_:-]+(/files/[A-Za-z0-9_./-]+)?)?)?)?)");
    return std::regex_match(path, allowed) && path.find("/../") == std::string::npos && !path.ends_with("/..");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Fixture fixture;
    if (size == 0) return 0;
    if (data[0] & 16) {
        httplib::Request req;
        req.method = "GET";
        req.path = req.target = "/portal/api/batch/read";
        req.params.emplace("account", "acct");
        req.params.emplace("path", std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
        fixture.asked.clear();
        httplib::Response res;
        fixture.portal.dispatch(req, res);
        if (!fixture.asked.empty() && !allowed_batch_path(fixture.asked)) __builtin_trap();
        if (res.status == 200 && fixture.asked.empty()) __builtin_trap();
        if (res.status != 200 && res.status != 400) __builtin_trap();
        if (nlohmann::json::parse(res.body, nullptr, false).is_discarded()) __builtin_trap();
        return 0;
    }
    httplib::Request req;
    req.method = "POST";
    req.path = req.target = "/portal/api/actions";
    req.set_header("Host", "127.0.0.1:1");
    if (data[0] & 1) req.set_header("X-Portal-Token", (data[0] & 2) ? "token" : "guess");
    if (data[0] & 4) req.set_header("Origin", (data[0] & 8) ? "https://127.0.0.1:1" : "https://elsewhere");
    req.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
    httplib::Response res;
    fixture.portal.dispatch(req, res);
    const bool allowed = (data[0] & 3) == 3 && (!(data[0] & 4) || (data[0] & 8));
    if (!allowed && res.status != 403) __builtin_trap();  // no action without the token and the origin
    if (res.status != 200 && res.status != 202 && res.status != 400 && res.status != 403 && res.status != 404) __builtin_trap();
    if (nlohmann::json::parse(res.body, nullptr, false).is_discarded()) __builtin_trap();
    return 0;
}
