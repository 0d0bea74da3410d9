// What the Batch routes share: reading a request's JSON body, an entity's ETag and
// Last-Modified headers.
#pragma once

#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "emulator/batch/entity_store.h"

namespace bai::batch {

// The body as a JSON object; BatchError 400 InvalidRequestBody otherwise.
nlohmann::json parse_body(const httplib::Request& req);
void set_entity_headers(httplib::Response& res, const StoredEntity& entity);
// A file of a node's or a task's directory (`relative` may not climb out of `root`): its content,
// as the file APIs answer it; BatchError 404 FileNotFound otherwise.
void send_file_under(httplib::Response& res, const std::filesystem::path& root, const std::string& relative);
// 201 Created for an entity added at `url` (ETag, Last-Modified, Location, DataServiceId).
void send_created(httplib::Response& res, const StoredEntity& entity, const std::string& url);

}  // namespace bai::batch
