#include "fake_storage/engine/lease.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "common/text/ascii.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

[[noreturn]] void conflict(const char* code, const char* message) { fail(409, code, message); }

[[noreturn]] void not_present() {
    conflict("LeaseNotPresentWithLeaseOperation", "There is currently no lease on the blob or container.");
}
[[noreturn]] void mismatch() {
    conflict("LeaseIdMismatchWithLeaseOperation", "The lease ID specified did not match the lease ID for the blob or container.");
}

bool same_id(const std::string& a, const std::string& b) { return text::iequals(a, b); }

const std::string& required_id(const LeaseRequest& r) {
    if (!r.lease_id || r.lease_id->empty()) {
        fail(400, "MissingRequiredHeader",
             "An HTTP header that's mandatory for this request is not specified.\nHeaderName:x-ms-lease-id");
    }
    return *r.lease_id;
}

Lease leased(const std::string& id, int duration, time::TimePoint now) {
    Lease l;
    l.id = id;
    l.duration = duration;
    if (duration != -1) l.expires = now + std::chrono::seconds(duration);
    return l;
}

Lease broken_at(Lease l, time::TimePoint when) {
    l.duration = 0;
    l.expires.reset();
    l.break_at = when;
    return l;
}

// x-ms-lease-time: the seconds left, rounded (as Azurite rounds them).
int seconds_until(time::TimePoint when, time::TimePoint now) {
    if (when <= now) return 0;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - now).count();
    return static_cast<int>((left + 500) / 1000);
}

const char* lease_state_name(LeaseState state) {
    switch (state) {
        case LeaseState::available: return "available";
        case LeaseState::leased: return "leased";
        case LeaseState::expired: return "expired";
        case LeaseState::breaking: return "breaking";
        case LeaseState::broken: return "broken";
    }
    return "available";
}

}  // namespace

LeaseState Lease::state(time::TimePoint now) const {
    if (id.empty()) return LeaseState::available;
    if (break_at) return now < *break_at ? LeaseState::breaking : LeaseState::broken;
    if (expires && now >= *expires) return LeaseState::expired;
    return LeaseState::leased;
}

bool Lease::locked(time::TimePoint now) const {
    LeaseState s = state(now);
    return s == LeaseState::leased || s == LeaseState::breaking;
}

LeaseReport report_lease(const Lease& lease, time::TimePoint now) {
    const LeaseState state = lease.state(now);
    const char* duration = nullptr;
    if (state == LeaseState::leased) duration = lease.duration == -1 ? "infinite" : "fixed";
    return {lease.locked(now) ? "locked" : "unlocked", lease_state_name(state), duration};
}

std::string lease_to_json(const Lease& lease) {
    if (lease.id.empty()) return "";
    nlohmann::json j{{"id", lease.id}, {"duration", lease.duration}};
    if (lease.expires) j["expires"] = time::to_ticks(*lease.expires);
    if (lease.break_at) j["break_at"] = time::to_ticks(*lease.break_at);
    return j.dump();
}

Lease lease_from_json(const std::string& text) {
    Lease lease;
    if (text.empty()) return lease;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return lease;
    lease.id = j.value("id", std::string());
    lease.duration = j.value("duration", 0);
    if (j.contains("expires")) lease.expires = time::from_ticks(j["expires"].get<std::int64_t>());
    if (j.contains("break_at")) lease.break_at = time::from_ticks(j["break_at"].get<std::int64_t>());
    return lease;
}

LeaseOutcome apply_lease(const Lease& current, const LeaseRequest& r, time::TimePoint now, const std::string& new_id) {
    const LeaseState state = current.state(now);
    switch (r.action) {
        case LeaseAction::acquire: {
            if (!r.duration || (*r.duration != -1 && (*r.duration < 15 || *r.duration > 60))) {
                fail(400, "InvalidHeaderValue",
                     "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-lease-duration"
                     "\nHeaderValue:" + (r.duration ? std::to_string(*r.duration) : std::string()));
            }
            const std::string proposed = r.proposed_id.value_or("");
            if (state == LeaseState::leased) {
                // Acquiring again with the lease's own id renews it with the new duration.
                if (!same_id(proposed, current.id)) conflict("LeaseAlreadyPresent", "There is already a lease present.");
                return {leased(current.id, *r.duration, now), 201};
            }
            if (state == LeaseState::breaking) {
                if (same_id(proposed, current.id)) {
                    conflict("LeaseIsBreakingAndCannotBeAcquired",
                             "There is already a breaking lease, and it cannot be acquired.");
                }
                conflict("LeaseAlreadyPresent", "There is already a lease present.");
            }
            return {leased(proposed.empty() ? new_id : proposed, *r.duration, now), 201};
        }
        case LeaseAction::renew: {
            const std::string& id = required_id(r);
            if (state == LeaseState::available) mismatch();
            if (!same_id(id, current.id)) mismatch();
            if (state == LeaseState::breaking || state == LeaseState::broken) {
                conflict("LeaseIsBrokenAndCannotBeRenewed",
                         "The lease ID matched, but the lease has been broken explicitly and cannot be renewed.");
            }
            return {leased(current.id, current.duration, now), 200};
        }
        case LeaseAction::change: {
            const std::string& id = required_id(r);
            if (!r.proposed_id || r.proposed_id->empty()) {
                fail(400, "MissingRequiredHeader",
                     "An HTTP header that's mandatory for this request is not specified.\nHeaderName:x-ms-proposed-lease-id");
            }
            if (state == LeaseState::available || state == LeaseState::expired || state == LeaseState::broken) not_present();
            // The lease's id, or (a retried change) the id it was already changed to.
            if (!same_id(id, current.id) && !same_id(*r.proposed_id, current.id)) mismatch();
            if (state == LeaseState::breaking) {
                conflict("LeaseIsBreakingAndCannotBeChanged",
                         "The lease ID matched, but the lease is currently in breaking state and cannot be changed.");
            }
            Lease changed = current;
            changed.id = *r.proposed_id;
            return {changed, 200};
        }
        case LeaseAction::release: {
            const std::string& id = required_id(r);
            if (state == LeaseState::available || !same_id(id, current.id)) mismatch();
            return {Lease{}, 200};
        }
        case LeaseAction::break_: {
            if (r.break_period && (*r.break_period < 0 || *r.break_period > 60)) {
                fail(400, "InvalidHeaderValue",
                     "The value for one of the HTTP headers is not in the correct format.\nHeaderName:x-ms-lease-break-period"
                     "\nHeaderValue:" + std::to_string(*r.break_period));
            }
            if (state == LeaseState::available) not_present();
            if (state == LeaseState::expired || state == LeaseState::broken) {
                return {broken_at(current, current.break_at.value_or(now)), 202, 0};
            }
            if (state == LeaseState::breaking) {
                time::TimePoint when = *current.break_at;
                if (r.break_period) when = std::min(when, now + std::chrono::seconds(*r.break_period));
                return {broken_at(current, when), 202, seconds_until(when, now)};
            }
            // Leased: an infinite lease breaks after the period given (at once without one); a
            // fixed one after the period or at its expiry, whichever comes first.
            time::TimePoint when = now;
            if (current.duration == -1) {
                when = now + std::chrono::seconds(r.break_period.value_or(0));
            } else {
                when = r.break_period ? std::min(*current.expires, now + std::chrono::seconds(*r.break_period))
                                      : *current.expires;
            }
            return {broken_at(current, when), 202, seconds_until(when, now)};
        }
    }
    not_present();
}

Lease lease_after_write(const Lease& lease, time::TimePoint now) {
    const LeaseState state = lease.state(now);
    return state == LeaseState::expired || state == LeaseState::broken ? Lease{} : lease;
}

void check_lease_for_write(const Lease& lease, const std::optional<std::string>& lease_id, time::TimePoint now,
                           LeaseTarget target) {
    const char* what = target == LeaseTarget::blob ? "blob" : target == LeaseTarget::file ? "file" : "container";
    const std::string kind = target == LeaseTarget::blob ? "Blob" : target == LeaseTarget::file ? "File" : "Container";
    const bool named = lease_id && !lease_id->empty();
    if (lease.locked(now)) {
        if (!named) {
            fail(412, "LeaseIdMissing", std::string("There is currently a lease on the ") + what +
                                            " and no lease ID was specified in the request.");
        }
        if (!same_id(*lease_id, lease.id)) {
            fail(412, "LeaseIdMismatchWith" + kind + "Operation",
                 std::string("The lease ID specified did not match the lease ID for the ") + what + ".");
        }
        return;
    }
    if (named) fail(412, "LeaseNotPresentWith" + kind + "Operation", std::string("There is currently no lease on the ") + what + ".");
}

void check_lease_if_named(const Lease& lease, const std::optional<std::string>& lease_id, time::TimePoint now,
                          LeaseTarget target) {
    if (!lease_id || lease_id->empty()) return;
    check_lease_for_write(lease, lease_id, now, target);
}

}  // namespace bai::storage
