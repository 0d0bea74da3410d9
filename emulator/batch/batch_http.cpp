#include "emulator/batch/batch_http.h"

#include <fstream>
#include <sstream>

#include "common/time/timestamps.h"
#include "emulator/batch/batch_error.h"

namespace bai::batch {

nlohmann::json parse_body(const httplib::Request& req) {
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
        throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    }
    return body;
}

void set_entity_headers(httplib::Response& res, const StoredEntity& entity) {
    res.set_header("ETag", entity.etag);
    res.set_header("Last-Modified", time::format_rfc1123(time::from_ticks(entity.modified_ticks)));
}

void send_file_under(httplib::Response& res, const std::filesystem::path& root, const std::string& relative) {
    const std::filesystem::path file = (root / relative).lexically_normal();
    const std::string prefix = root.lexically_normal().string() + "/";
    std::error_code ec;
    if (root.empty() || file.string().rfind(prefix, 0) != 0 || !std::filesystem::is_regular_file(file, ec)) {
        throw BatchError(404, "FileNotFound", "The specified file does not exist.");
    }
    std::ifstream in(file, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    res.set_header("ocp-batch-file-isdirectory", "False");
    res.set_content(content.str(), "application/octet-stream");
}

void send_created(httplib::Response& res, const StoredEntity& entity, const std::string& url) {
    set_entity_headers(res, entity);
    res.set_header("Location", url);
    res.set_header("DataServiceId", url);
    res.status = 201;
}

}  // namespace bai::batch
