#include "emulator/batch/batch_http.h"

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

void send_created(httplib::Response& res, const StoredEntity& entity, const std::string& url) {
    set_entity_headers(res, entity);
    res.set_header("Location", url);
    res.set_header("DataServiceId", url);
    res.status = 201;
}

}  // namespace bai::batch
