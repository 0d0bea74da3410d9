#include "emulator/batch/batch_http.h"

#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/odata_query.h"

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

namespace {

std::string unquoted(std::string tag) {
    tag = std::string(text::trim(tag));
    if (tag.rfind("W/", 0) == 0) tag = tag.substr(2);
    if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') tag = tag.substr(1, tag.size() - 2);
    return tag;
}

// Whether one of the header's comma-separated ETags is the entity's (or it is *).
bool names_etag(const std::string& header, const std::string& etag) {
    size_t start = 0;
    while (start <= header.size()) {
        const size_t comma = header.find(',', start);
        const std::string one = unquoted(header.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (one == "*" || one == unquoted(etag)) return true;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return false;
}

// The entity's last change, to the second (HTTP dates have no finer unit).
time::TimePoint modified_second(const StoredEntity& entity) {
    return std::chrono::floor<std::chrono::seconds>(time::from_ticks(entity.modified_ticks));
}

}  // namespace

Conditions check_conditions(const httplib::Request& req, const StoredEntity& entity) {
    const bool read = req.method == "GET" || req.method == "HEAD";
    const BatchError not_met(412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.");
    if (req.has_header("If-Match") && !names_etag(req.get_header_value("If-Match"), entity.etag)) throw not_met;
    if (req.has_header("If-Unmodified-Since")) {
        std::optional<time::TimePoint> since = time::parse_rfc1123(req.get_header_value("If-Unmodified-Since"));
        if (since && modified_second(entity) > *since) throw not_met;
    }
    if (req.has_header("If-None-Match") && names_etag(req.get_header_value("If-None-Match"), entity.etag)) {
        if (read) return Conditions::not_modified;
        throw not_met;
    }
    if (req.has_header("If-Modified-Since") && !req.has_header("If-None-Match")) {
        std::optional<time::TimePoint> since = time::parse_rfc1123(req.get_header_value("If-Modified-Since"));
        if (since && modified_second(entity) <= *since) {
            if (read) return Conditions::not_modified;
            throw not_met;
        }
    }
    return Conditions::met;
}

bool has_conditions(const httplib::Request& req) {
    return req.has_header("If-Match") || req.has_header("If-None-Match") || req.has_header("If-Modified-Since") ||
           req.has_header("If-Unmodified-Since");
}

bool answered_not_modified(const httplib::Request& req, httplib::Response& res, const StoredEntity& entity) {
    if (check_conditions(req, entity) != Conditions::not_modified) return false;
    set_entity_headers(res, entity);
    res.status = 304;
    return true;
}

bool expands_stats(const httplib::Request& req) {
    if (!req.has_param("$expand")) return false;
    const std::string value = req.get_param_value("$expand");
    if (text::trim(value) == "stats") return true;
    throw BatchError(400, "InvalidQueryParameterValue", "The value for one of the query parameters specified in the request URI is invalid.",
                     {{"QueryParameterName", "$expand"}, {"QueryParameterValue", value}, {"Reason", "The only expansion is stats"}});
}

Page page_of(const httplib::Request& req) {
    Page page;
    if (req.has_param("maxresults")) {
        const std::string text = req.get_param_value("maxresults");
        try {
            page.limit = std::stoi(text);
        } catch (const std::exception&) {
            page.limit = 0;
        }
        if (page.limit < 1 || page.limit > 1000) {
            throw BatchError(400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.",
                             {{"QueryParameterName", "maxresults"}, {"QueryParameterValue", text},
                              {"Reason", "The value must be between 1 and 1000"}});
        }
    }
    page.after = req.get_param_value("$skiptoken");
    return page;
}

namespace {

BatchError invalid_query(const httplib::Request& req, const char* name, const std::string& reason) {
    return BatchError(400, "InvalidQueryParameterValue",
                      "Value for one of the query parameters specified in the request URI is invalid.",
                      {{"QueryParameterName", name}, {"QueryParameterValue", req.get_param_value(name)}, {"Reason", reason}});
}

}  // namespace

std::optional<odata::Filter> filter_of(const httplib::Request& req) {
    if (!req.has_param("$filter")) return std::nullopt;
    try {
        return odata::Filter::parse(req.get_param_value("$filter"), odata::Case::sensitive);
    } catch (const std::invalid_argument& e) {
        throw invalid_query(req, "$filter", e.what());
    }
}

std::optional<std::vector<std::string>> select_of(const httplib::Request& req) {
    if (!req.has_param("$select")) return std::nullopt;
    try {
        return parse_select(req.get_param_value("$select"));
    } catch (const std::invalid_argument& e) {
        throw invalid_query(req, "$select", e.what());
    }
}

std::int64_t skip_count(const httplib::Request& req, const Page& page) {
    if (page.after.empty()) return 0;
    std::int64_t count = -1;
    try {
        size_t used = 0;
        count = std::stoll(page.after, &used);
        if (used != page.after.size()) count = -1;
    } catch (const std::exception&) {
        count = -1;
    }
    if (count < 0) {
        throw BatchError(400, "InvalidQueryParameterValue", "Value for one of the query parameters specified in the request URI is invalid.",
                         {{"QueryParameterName", "$skiptoken"}, {"QueryParameterValue", req.get_param_value("$skiptoken")}});
    }
    return count;
}

std::string next_link(const httplib::Request& req, const std::string& url, int limit, const std::string& next) {
    // The request's own parameters again, in the service's order.
    std::string link = url + "?api-version=" + req.get_param_value("api-version") + "&maxresults=" + std::to_string(limit);
    if (req.has_param("timeout")) link += "&timeout=" + httplib::detail::encode_query_param(req.get_param_value("timeout"));
    link += "&$skiptoken=" + httplib::detail::encode_query_param(next);
    for (const char* kept : {"recursive", "$filter", "$select", "$expand"}) {
        if (req.has_param(kept)) link += std::string("&") + kept + "=" + httplib::detail::encode_query_param(req.get_param_value(kept));
    }
    return link;
}

void send_computed_list(const httplib::Request& req, httplib::Response& res, const nlohmann::json& items, const std::string& metadata) {
    const Page page = page_of(req);
    const std::optional<odata::Filter> filter = filter_of(req);
    const std::int64_t skip = skip_count(req, page);
    nlohmann::json value = nlohmann::json::array();
    std::int64_t seen = 0;
    std::optional<std::int64_t> next;
    for (const nlohmann::json& item : items) {
        if (filter && !filter->matches(item)) continue;
        if (seen++ < skip) continue;
        if (static_cast<int>(value.size()) == page.limit) {
            next = skip + page.limit;
            break;
        }
        value.push_back(item);
    }
    nlohmann::json body{{"odata.metadata", metadata}, {"value", value}};
    if (next) body["odata.nextLink"] = next_link(req, metadata.substr(0, metadata.find("/$metadata")) + req.path, page.limit,
                                                  std::to_string(*next));
    res.set_content(body.dump(), "application/json;odata=minimalmetadata");
}

void send_created(httplib::Response& res, const StoredEntity& entity, const std::string& url) {
    set_entity_headers(res, entity);
    res.set_header("Location", url);
    res.set_header("DataServiceId", url);
    res.status = 201;
}

std::string option_of(const nlohmann::json& body, const std::string& name, const std::vector<std::string>& allowed) {
    if (!body.contains(name) || body[name].is_null()) return allowed.front();
    if (body[name].is_string()) {
        const std::string value = body[name].get<std::string>();
        for (const std::string& one : allowed) {
            if (text::iequals(one, value)) return one;
        }
    }
    std::string list;
    for (const std::string& one : allowed) list += (list.empty() ? "" : ", ") + one;
    throw invalid_property(name, body[name].dump(), "The value must be one of " + list);
}

}  // namespace bai::batch
