#include "emulator/batch/batch_error.h"

#include <nlohmann/json.hpp>

#include "common/crypto/random_id.h"
#include "common/time/timestamps.h"

namespace bai::batch {

BatchError invalid_property(const std::string& property, const std::string& value, const std::string& reason) {
    return BatchError(400, "InvalidPropertyValue", "The value provided for one of the properties in the request body is invalid.",
                      {{"PropertyName", property}, {"PropertyValue", value}, {"Reason", reason}});
}

BatchError missing_property(const std::string& property) {
    return BatchError(400, "MissingRequiredProperty", "A required property was not specified in the request body.",
                      {{"PropertyName", property}});
}

namespace {

// `code` prefixes the codes ("Job", "JobSchedule"), `noun` names the resource in the messages.
void need_changeable(const nlohmann::json& doc, const std::string& code, const std::string& noun) {
    const std::string state = doc.value("state", "");
    if (state == "completed") throw BatchError(409, code + "Completed", "The specified " + noun + " is already in a completed state.");
    if (state == "terminating") throw BatchError(409, code + "BeingTerminated", "The specified " + noun + " is being terminated.");
    if (state == "deleting") {
        throw BatchError(409, code + "BeingDeleted",
                         "The specified " + noun + " has been marked for deletion and is being garbage collected.");
    }
}

}  // namespace

void check_under(const std::string& prefix, const std::function<void()>& check) {
    try {
        check();
    } catch (BatchError& e) {
        for (auto& [key, value] : e.values) {
            if (key == "PropertyName") value = prefix + value;
        }
        throw;
    }
}

std::optional<time::TimePoint> time_property(const nlohmann::json& object, const char* name, const std::string& path) {
    if (!object.contains(name) || object[name].is_null()) return std::nullopt;
    const nlohmann::json& value = object[name];
    std::optional<time::TimePoint> t = value.is_string() ? time::parse_iso8601(value.get<std::string>()) : std::nullopt;
    if (!t) throw invalid_property(path, value.dump(), "The value is a date and time such as 2030-01-01T00:00:00Z");
    return t;
}

void need_job_changeable(const nlohmann::json& job) { need_changeable(job, "Job", "job"); }
void need_schedule_changeable(const nlohmann::json& schedule) { need_changeable(schedule, "JobSchedule", "job schedule"); }

void write_error(httplib::Response& res, const BatchError& error, const std::string& base_url) {
    // The id the answer already carries (every answer of the endpoint has one), or a new one.
    std::string request_id = res.get_header_value("request-id");
    if (request_id.empty()) {
        request_id = crypto::uuid4();
        res.set_header("request-id", request_id);
    }
    nlohmann::json values = nlohmann::json::array();
    for (const auto& [key, value] : error.values) values.push_back({{"key", key}, {"value", value}});
    nlohmann::json body{
        {"odata.metadata", base_url + "/$metadata#Microsoft.Azure.Batch.Protocol.Entities.Container.errors/@Element"},
        {"code", error.code},
        {"message",
         {{"lang", "en-US"},
          {"value", std::string(error.what()) + "\nRequestId:" + request_id + "\nTime:" + time::format_iso8601(time::now())}}}};
    if (!values.empty()) body["values"] = values;
    res.status = error.status;
    res.set_header("DataServiceVersion", "3.0");
    res.set_content(body.dump(), "application/json;odata=minimalmetadata");
}

}  // namespace bai::batch
