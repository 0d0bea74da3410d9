#include "fake_storage/http/lease_headers.h"

#include <algorithm>
#include <charconv>

#include "common/text/ascii.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"
#include "fake_storage/http/storage_operations.h"

namespace bai::storage {

bool is_lease_id(std::string_view v) {
    if ((v.starts_with('{') && v.ends_with('}')) || (v.starts_with('(') && v.ends_with(')'))) {
        if (v.size() != 38) return false;
        v = v.substr(1, 36);
    }
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
    if (v.size() == 32) return std::all_of(v.begin(), v.end(), hex);
    if (v.size() != 36) return false;
    for (size_t i = 0; i < v.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? v[i] != '-' : !hex(v[i])) return false;
    }
    return true;
}

std::optional<std::string> read_lease_id(const StorageRequest& r, const char* name) {
    if (!r.has_header(name)) return std::nullopt;
    std::string value = r.header(name);
    if (!is_lease_id(value)) invalid_header(name, value);
    return value;
}

LeaseRequest lease_request(const StorageRequest& r) {
    if (!r.has_header("x-ms-lease-action")) missing_header("x-ms-lease-action");
    const std::string action = text::lower(r.header("x-ms-lease-action"));
    LeaseRequest request{};
    if (action == "acquire") request.action = LeaseAction::acquire;
    else if (action == "renew") request.action = LeaseAction::renew;
    else if (action == "change") request.action = LeaseAction::change;
    else if (action == "release") request.action = LeaseAction::release;
    else if (action == "break") request.action = LeaseAction::break_;
    else invalid_header("x-ms-lease-action", r.header("x-ms-lease-action"));
    request.lease_id = read_lease_id(r, "x-ms-lease-id");
    request.proposed_id = read_lease_id(r, "x-ms-proposed-lease-id");
    auto integer = [&](const char* name) -> std::optional<int> {
        if (!r.has_header(name)) return std::nullopt;
        const std::string value = r.header(name);
        int n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (value.empty() || ec != std::errc() || end != value.data() + value.size()) invalid_header(name, value);
        return n;
    };
    // Each action reads only its own headers (a stray one on another action is ignored).
    if (request.action == LeaseAction::acquire) request.duration = integer("x-ms-lease-duration");
    if (request.action == LeaseAction::break_) request.break_period = integer("x-ms-lease-break-period");
    if (request.action == LeaseAction::acquire && !request.duration) missing_header("x-ms-lease-duration");
    return request;
}

void write_lease_outcome(httplib::Response& res, const LeaseOutcome& outcome, const std::string& etag,
                         time::TimePoint modified) {
    res.status = outcome.status;
    set_version_headers(res, etag, modified);
    if (outcome.status == 202) {
        res.set_header("x-ms-lease-time", std::to_string(outcome.break_seconds));
    } else if (!outcome.lease.id.empty()) {
        res.set_header("x-ms-lease-id", outcome.lease.id);
    }
}

void write_lease_headers(httplib::Response& res, const Lease& lease, time::TimePoint now) {
    const LeaseReport report = report_lease(lease, now);
    res.set_header("x-ms-lease-status", report.status);
    res.set_header("x-ms-lease-state", report.state);
    if (report.duration != nullptr) res.set_header("x-ms-lease-duration", report.duration);
}

}  // namespace bai::storage
