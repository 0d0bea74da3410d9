// What the Batch routes share: reading a request's JSON body, an entity's ETag and
// Last-Modified headers.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "emulator/batch/entity_store.h"

namespace bai::batch {

// The body as a JSON object; BatchError 400 InvalidRequestBody otherwise.
nlohmann::json parse_body(const httplib::Request& req);
void set_entity_headers(httplib::Response& res, const StoredEntity& entity);
// 201 Created for an entity added at `url` (ETag, Last-Modified, Location, DataServiceId).
void send_created(httplib::Response& res, const StoredEntity& entity, const std::string& url);

}  // namespace bai::batch
