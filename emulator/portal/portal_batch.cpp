#include "emulator/portal/portal_batch.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "emulator/portal/portal_json.h"
#include "emulator/portal/portal_storage_params.h"

namespace bai::portal {
namespace {

using nlohmann::json;

constexpr const char* kApiVersion = "2022-10-01.16.0";
constexpr size_t kMaxFile = 1 << 20;

// The reads the pages make; anything else is refused (the portal is no proxy of the Batch API).
const std::regex kEntities(R"(/(pools|jobs)(/[A-Za-z0-9_-]{1,64}(/(nodes|tasks)(/[A-Za-z0-9_-]{1,64})?)?)?)");
const std::regex kFiles(R"(/(pools/[A-Za-z0-9_-]{1,64}/nodes|jobs/[A-Za-z0-9_-]{1,64}/tasks)/[A-Za-z0-9_-]{1,64}/files/([A-Za-z0-9_./-]{1,512}))");

void read(const BatchSources& s, const httplib::Request& req, httplib::Response& res) {
    const std::string account = param(req, "account");
    if (account.size() > 64 || !s.accounts.find(account)) {
        return send_portal_error(res, 404, "AccountNotFound", "There is no Batch account '" + account.substr(0, 64) + "'.");
    }
    const std::string path = param(req, "path");
    std::smatch file;
    const bool is_file = std::regex_match(path, file, kFiles);
    if (!is_file && !std::regex_match(path, kEntities)) {
        return send_portal_error(res, 400, "InvalidParameter",
                                 "The parameter path must be /pools, /jobs, a pool's nodes, a job's tasks, or a node's or "
                                 "task's file.");
    }
    if (is_file && ("/" + file[2].str() + "/").find("/../") != std::string::npos) {
        return send_portal_error(res, 400, "InvalidParameter", "The parameter path must not leave the files' directory.");
    }
    httplib::Request call;
    call.method = "GET";
    call.path = "/" + account + path;
    call.target = call.path + "?api-version=" + kApiVersion;
    call.params.emplace("api-version", kApiVersion);
    call.set_header("Host", s.host);
    call.set_header("Authorization", "Bearer portal");
    if (is_file) call.set_header("ocp-range", "bytes=0-" + std::to_string(kMaxFile - 1));
    if (s.path_rewrite) s.path_rewrite(call);
    httplib::Response answer;
    s.batch.dispatch(call, answer);
    const int status = answer.status < 0 ? 200 : answer.status;
    if (is_file && status == 416) {  // an empty file: no byte 0 to read
        return send_json(res, 200, json{{"status", 200}, {"text", ""}, {"size", "0"}});
    }
    if (is_file && status < 300) {
        std::string size = answer.get_header_value("ocp-content-length");
        if (size.empty()) size = answer.get_header_value("Content-Length");
        return send_json(res, 200, json{{"status", status}, {"text", answer.body}, {"size", size}});
    }
    json body = json::parse(answer.body, nullptr, false);
    if (body.is_discarded()) body = json();
    // The Batch API's refusal as the Batch API said it (404 PoolNotFound, TaskNotFound...).
    send_json(res, status, json{{"status", status}, {"answer", body}});
}

}  // namespace

void add_batch_routes(http::Routes& routes, const BatchSources& sources) {
    routes.Get("/portal/api/batch/accounts", [sources](const httplib::Request&, httplib::Response& res) {
        send_json(res, 200, json{{"accounts", sources.accounts.names()}});
    });
    routes.Get("/portal/api/batch/read", [sources](const httplib::Request& req, httplib::Response& res) {
        read(sources, req, res);
    });
}

}  // namespace bai::portal
