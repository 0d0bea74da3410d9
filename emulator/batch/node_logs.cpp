// The Batch API's uploadbatchservicelogs: a node's service logs copied into a container the
// client names by SAS URL, under batch-ACCOUNTHASH/POOL/NODE/UUID/ as the service names the
// directory. The emulator's node has no agent of its own: what it uploads is the record it keeps
// of the node (agent.log: its state, address, times and task counts) and its start task's
// stdout.txt and stderr.txt, those of them last changed within [startTime, endTime]. Uploads go
// to loopback hosts only (the emulator's own Blob endpoint among them).
#include <cctype>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "common/crypto/digest.h"
#include "common/crypto/random_id.h"
#include "common/log/logger.h"
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/task_files.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

time::TimePoint need_time(const json& body, const char* name, bool required) {
    if (required && (!body.contains(name) || body[name].is_null())) throw missing_property(name);
    return time_property(body, name, name).value_or(time::TimePoint::max());
}

std::optional<time::TimePoint> modified_at(const fs::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return time::TimePoint(std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec));
}

}  // namespace

void BatchApi::upload_node_logs(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const std::string pool_id = req.matches[1], node_id = req.matches[2];
    json body = parse_body(req);
    if (!body.contains("containerUrl")) throw missing_property("containerUrl");
    if (!body["containerUrl"].is_string() || body["containerUrl"].get<std::string>().find("://") == std::string::npos) {
        throw invalid_property("containerUrl", body["containerUrl"].dump(), "The value is a container's URL with a SAS");
    }
    const time::TimePoint from = need_time(body, "startTime", true);
    const time::TimePoint to = need_time(body, "endTime", false);
    refuse_unknown_properties(body, "UploadBatchServiceLogsConfiguration");
    const fs::path root = need_node_root(account, pool_id, node_id);
    json node;
    for (const json& one : nodes_.nodes(account.name, pool_id)) {
        if (one.value("id", "") == node_id) node = one;
    }
    // batch-<16 hex of the account>/POOL/NODE/UUID, as the service's answers name it.
    const std::string directory = "batch-" + text::upper(crypto::hex_of(crypto::sha256(account.name)).substr(0, 16)) + "/" + pool_id +
                                  "/" + node_id + "/" + crypto::uuid4();
    std::vector<std::pair<std::string, std::string>> files;
    files.emplace_back("agent.log", node.dump(2) + "\n");
    for (const char* log : {"stdout.txt", "stderr.txt"}) {
        const fs::path file = root / "startup" / log;
        std::optional<time::TimePoint> changed = modified_at(file);
        if (!changed || *changed < from || *changed > to) continue;
        std::ifstream in(file, std::ios::binary);
        std::stringstream content;
        content << in.rdbuf();
        files.emplace_back(std::string("startup/") + log, content.str());
    }
    // The service answers before it uploads, and a failed upload shows in no answer: one that
    // cannot be made here (a host off this machine, a SAS refused) goes to the log.
    for (const auto& [name, content] : files) {
        if (std::optional<std::string> why = upload_blob(body["containerUrl"], directory + "/" + name, content)) {
            log::warning("batch node " + node_id + ": its logs were not uploaded: " + *why);
            break;
        }
    }
    json out{{"odata.metadata", base_url(req) + "/$metadata#Microsoft.Azure.Batch.Protocol.Entities.UploadBatchServiceLogsResult"},
             {"virtualDirectoryName", directory},
             {"numberOfFilesUploaded", files.size()}};
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

}  // namespace bai::batch
