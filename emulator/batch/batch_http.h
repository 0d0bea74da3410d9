// What the Batch routes share: reading a request's JSON body, an entity's ETag and
// Last-Modified headers.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/odata/filter.h"
#include "emulator/batch/entity_store.h"

namespace bai::batch {

// The body as a JSON object; BatchError 400 InvalidRequestBody otherwise.
nlohmann::json parse_body(const httplib::Request& req);
// An option of a body (nodeRebootOption, nodeDeallocationOption, ...) spelled as one of `allowed`
// in any case, returned as spelled there; the first when absent; BatchError 400
// InvalidPropertyValue otherwise.
std::string option_of(const nlohmann::json& body, const std::string& name, const std::vector<std::string>& allowed);
void set_entity_headers(httplib::Response& res, const StoredEntity& entity);
// The request's conditional headers against the entity as it is: If-Match (its ETag, quoted or
// not, or *), If-None-Match, If-Modified-Since, If-Unmodified-Since (HTTP dates, to the second).
// A read (GET, HEAD) whose If-None-Match matches or that is not modified since answers
// kNotModified (304, no body); any other unmet condition throws BatchError 412 ConditionNotMet.
enum class Conditions { met, not_modified };
Conditions check_conditions(const httplib::Request& req, const StoredEntity& entity);
bool has_conditions(const httplib::Request& req);
// check_conditions for a route: true when the request was answered 304 (nothing more to do).
bool answered_not_modified(const httplib::Request& req, httplib::Response& res, const StoredEntity& entity);
// A list's page as asked: maxresults (1 to 1000, 1000 without) and $skiptoken (where the last
// page stopped, opaque; empty without); BatchError 400 InvalidQueryParameterValue otherwise.
struct Page {
    int limit = 1000;
    std::string after;
};
Page page_of(const httplib::Request& req);
// A list's $filter (strings compared as they are) and $select, when asked; BatchError 400
// InvalidQueryParameterValue naming a malformed one, with the reason.
std::optional<odata::Filter> filter_of(const httplib::Request& req);
std::optional<std::vector<std::string>> select_of(const httplib::Request& req);
// Whether the request asks $expand=stats (the only expansion the service has for pools and jobs);
// BatchError 400 InvalidQueryParameterValue naming $expand for anything else.
bool expands_stats(const httplib::Request& req);
// A $skiptoken that counts entries (a file list's): 0 without; BatchError 400 otherwise.
std::int64_t skip_count(const httplib::Request& req, const Page& page);
// odata.nextLink: the list's `url` again from `next` (with the request's $filter and $select).
std::string next_link(const httplib::Request& req, const std::string& url, int limit, const std::string& next);

// A list computed per request (not stored: node counts, supported images, usage metrics): its
// $filter, maxresults and $skiptoken (a count) applied; `metadata` is its odata.metadata.
void send_computed_list(const httplib::Request& req, httplib::Response& res, const nlohmann::json& items,
                        const std::string& metadata);

// 201 Created for an entity added at `url` (ETag, Last-Modified, Location, DataServiceId).
void send_created(httplib::Response& res, const StoredEntity& entity, const std::string& url);

}  // namespace bai::batch
