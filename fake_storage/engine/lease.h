// Leases on blobs, containers, shares and files: the service's state machine (Lease Blob, Lease
// Container, Lease Share, Lease File) and the checks every other operation makes of a lease. No
// storage and no HTTP here: the stores keep a Lease beside each blob, container, share and file
// (lease_to_json) and call these, with the time of their clock, inside the transaction of every
// write (reads check what they read).
#pragma once

#include <optional>
#include <string>

#include "common/time/timestamps.h"

namespace bai::storage {

enum class LeaseState { available, leased, expired, breaking, broken };

struct Lease {
    std::string id;                      // empty: never leased, or released
    int duration = 0;                    // -1 infinite, 15 to 60 seconds fixed (while leased)
    std::optional<time::TimePoint> expires;   // fixed leases
    std::optional<time::TimePoint> break_at;  // breaking (then broken) leases

    LeaseState state(time::TimePoint now) const;
    // x-ms-lease-status: locked while leased or breaking.
    bool locked(time::TimePoint now) const;
};

// What the service reports of a lease (headers and listings alike): LeaseStatus (locked while
// leased or breaking), LeaseState, and LeaseDuration (infinite or fixed; null unless leased).
struct LeaseReport {
    const char* status;
    const char* state;
    const char* duration;
};
LeaseReport report_lease(const Lease& lease, time::TimePoint now);

std::string lease_to_json(const Lease& lease);  // "" for a lease never taken
Lease lease_from_json(const std::string& text);

enum class LeaseAction { acquire, renew, change, release, break_ };

struct LeaseRequest {
    LeaseAction action;
    std::optional<std::string> lease_id;     // x-ms-lease-id
    std::optional<std::string> proposed_id;  // x-ms-proposed-lease-id
    std::optional<int> duration;             // x-ms-lease-duration
    std::optional<int> break_period;         // x-ms-lease-break-period
};

struct LeaseOutcome {
    Lease lease;
    int status = 200;       // 201 acquire, 202 break, 200 the others
    int break_seconds = 0;  // break: x-ms-lease-time, the seconds until it is broken
};

// Applies a lease operation to `current`; throws StorageError with the service's 409 codes
// (LeaseAlreadyPresent, LeaseIdMismatchWithLeaseOperation, LeaseNotPresentWithLeaseOperation,
// LeaseIsBreakingAndCannotBeAcquired, LeaseIsBreakingAndCannotBeChanged,
// LeaseIsBrokenAndCannotBeRenewed), 400 InvalidHeaderValue for a duration or break period out
// of range, or 400 MissingRequiredHeader for an action without the lease id (or proposed id) it
// needs. `new_id` names a lease acquired without a proposed id.
LeaseOutcome apply_lease(const Lease& current, const LeaseRequest& request, time::TimePoint now,
                         const std::string& new_id);

// What a write leaves of a blob's lease: an expired or broken lease ends with it (the blob is
// then available), as the service does; a held one stays.
Lease lease_after_write(const Lease& lease, time::TimePoint now);

// The codes and messages name what is leased: a blob, a container (or share), or a file
// (LeaseIdMismatchWithFileOperation, LeaseNotPresentWithFileOperation).
enum class LeaseTarget { blob, container, file };

// An operation that changes a blob (or deletes a container): a locked lease needs its id (412
// LeaseIdMissing / LeaseIdMismatchWith...Operation); an id given where none is locked is 412
// LeaseNotPresentWith...Operation.
void check_lease_for_write(const Lease& lease, const std::optional<std::string>& lease_id, time::TimePoint now,
                           LeaseTarget target);
// An operation that only names a lease if it likes (reads, container metadata and ACL): an id
// given must be the locked lease's.
void check_lease_if_named(const Lease& lease, const std::optional<std::string>& lease_id, time::TimePoint now,
                          LeaseTarget target);

}  // namespace bai::storage
