// Errors of the Batch service as it answers them: an HTTP status and an OData error document
// {"odata.metadata", "code", "message": {"lang", "value"}, "values": [{"key", "value"}]}, where
// values name the offending property (PropertyName, Reason) as the service did.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/time/timestamps.h"

namespace bai::batch {

struct BatchError : std::runtime_error {
    BatchError(int status, std::string code, const std::string& message,
               std::vector<std::pair<std::string, std::string>> values = {})
        : std::runtime_error(message), status(status), code(std::move(code)), values(std::move(values)) {}
    int status;
    std::string code;
    std::vector<std::pair<std::string, std::string>> values;
};

// 400 InvalidPropertyValue naming the property and why.
BatchError invalid_property(const std::string& property, const std::string& value, const std::string& reason);
// 400 MissingRequiredProperty.
BatchError missing_property(const std::string& property);

// 409 for a job (JobCompleted, JobBeingTerminated, JobBeingDeleted) or a job schedule
// (JobScheduleCompleted, ...) past being changed; nothing while it is active or disabled.
void need_job_changeable(const nlohmann::json& job);
void need_schedule_changeable(const nlohmann::json& schedule);

// Runs `check`; the PropertyName of a BatchError it throws is named under `prefix` (a nested
// object's checks: "jobManagerTask.", "jobSpecification.").
void check_under(const std::string& prefix, const std::function<void()>& check);

// A date-time property `name` of a request body object (such as 2030-01-01T00:00:00Z): nullopt
// when absent or null; 400 InvalidPropertyValue naming `path` when it is not a date and time.
std::optional<time::TimePoint> time_property(const nlohmann::json& object, const char* name, const std::string& path);

// The response of an error; `base_url` is the account's URL (for odata.metadata).
void write_error(httplib::Response& res, const BatchError& error, const std::string& base_url);

}  // namespace bai::batch
