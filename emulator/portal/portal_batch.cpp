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
const std::regex kEntities(R"(/(pools|jobs)(/[A-Za-z0-9_:-]{1,256}(/(nodes|tasks)(/[A-Za-z0-9_:-]{1,256})?)?)?)");
const std::regex kFiles(R"(/(pools/[A-Za-z0-9_:-]{1,256}/nodes|jobs/[A-Za-z0-9_:-]{1,256}/tasks)/[A-Za-z0-9_:-]{1,256}/files/([A-Za-z0-9_./-]{1,512}))");

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
    // One byte past the most shown: whether there is more.
    if (is_file) call.set_header("ocp-range", "bytes=0-" + std::to_string(kMaxFile));
    if (s.path_rewrite) s.path_rewrite(call);
    httplib::Response answer;
    s.batch.dispatch(call, answer);
    const int status = answer.status < 0 ? 200 : answer.status;
    if (is_file && status == 416) {  // an empty file: no byte 0 to read
        return send_json(res, 200, json{{"status", 200}, {"text", ""}, {"truncated", false}});
    }
    if (is_file && status < 300) {
        const bool truncated = answer.body.size() > kMaxFile;
        return send_json(res, 200, json{{"status", status}, {"text", answer.body.substr(0, kMaxFile)}, {"truncated", truncated}});
    }
    json body = json::parse(answer.body, nullptr, false);
    if (body.is_discarded()) body = json();
    if (status >= 400) {
        // The Batch API's refusal as the portal's error (404 PoolNotFound, TaskNotFound...).
        const json message = body.is_object() && body.contains("message") ? body["message"] : json();
        const std::string text = message.is_object() && message.contains("value") && message["value"].is_string()
                                     ? message["value"].get<std::string>()
                                     : "The Batch API answered " + std::to_string(status) + ".";
        const std::string code = body.is_object() && body.contains("code") && body["code"].is_string()
                                     ? body["code"].get<std::string>()
                                     : "BatchError";
        return send_portal_error(res, status, code, text.substr(0, text.find('\n')));
    }
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
