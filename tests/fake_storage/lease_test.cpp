#include "fake_storage/engine/lease.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fake_storage/engine/storage_error.h"
#include "tests/fake_storage/error_code.h"

namespace bai::storage {
namespace {

using std::chrono::seconds;

const time::TimePoint t0 = time::from_ticks(16000000000000000);

using testing::code_of;

LeaseRequest acquire(int duration, std::string proposed = "") {
    LeaseRequest r{LeaseAction::acquire};
    r.duration = duration;
    if (!proposed.empty()) r.proposed_id = proposed;
    return r;
}

LeaseRequest with_id(LeaseAction action, std::string id) {
    LeaseRequest r{action};
    r.lease_id = id;
    return r;
}

TEST(Lease, AFixedLeaseExpiresAndCanBeRenewedByItsHolder) {
    LeaseOutcome got = apply_lease(Lease{}, acquire(15, "a"), t0, "generated");
    EXPECT_EQ(got.status, 201);
    EXPECT_EQ(got.lease.id, "a");
    EXPECT_EQ(got.lease.state(t0 + seconds(14)), LeaseState::leased);
    EXPECT_TRUE(got.lease.locked(t0 + seconds(14)));
    EXPECT_EQ(got.lease.state(t0 + seconds(15)), LeaseState::expired);
    EXPECT_FALSE(got.lease.locked(t0 + seconds(15)));
    // Expired: its holder may renew it; anyone may acquire it.
    LeaseOutcome renewed = apply_lease(got.lease, with_id(LeaseAction::renew, "A"), t0 + seconds(20), "x");
    EXPECT_EQ(renewed.lease.state(t0 + seconds(34)), LeaseState::leased);
    EXPECT_EQ(apply_lease(got.lease, acquire(-1), t0 + seconds(20), "generated").lease.id, "generated");
    // A write ends an expired lease.
    EXPECT_TRUE(lease_after_write(got.lease, t0 + seconds(20)).id.empty());
    EXPECT_EQ(lease_after_write(got.lease, t0 + seconds(1)).id, "a");
}

TEST(Lease, AHeldLeaseRefusesOthers) {
    Lease held = apply_lease(Lease{}, acquire(-1, "a"), t0, "").lease;
    EXPECT_EQ(code_of([&] { apply_lease(held, acquire(-1, "b"), t0, ""); }), "409 LeaseAlreadyPresent");
    EXPECT_EQ(apply_lease(held, acquire(30, "a"), t0, "").lease.duration, 30);  // its own id: again
    EXPECT_EQ(code_of([&] { apply_lease(held, with_id(LeaseAction::renew, "b"), t0, ""); }),
              "409 LeaseIdMismatchWithLeaseOperation");
    EXPECT_EQ(code_of([&] { apply_lease(held, with_id(LeaseAction::release, "b"), t0, ""); }),
              "409 LeaseIdMismatchWithLeaseOperation");
    LeaseRequest change = with_id(LeaseAction::change, "a");
    change.proposed_id = "c";
    EXPECT_EQ(apply_lease(held, change, t0, "").lease.id, "c");
    EXPECT_EQ(apply_lease(held, with_id(LeaseAction::release, "a"), t0, "").lease.state(t0), LeaseState::available);
    EXPECT_EQ(code_of([&] { apply_lease(held, acquire(14), t0, ""); }), "400 InvalidHeaderValue");
    EXPECT_EQ(code_of([&] { apply_lease(held, acquire(61), t0, ""); }), "400 InvalidHeaderValue");
    EXPECT_EQ(code_of([&] { apply_lease(held, LeaseRequest{LeaseAction::renew}, t0, ""); }), "400 MissingRequiredHeader");
}

TEST(Lease, BreakingThenBroken) {
    Lease held = apply_lease(Lease{}, acquire(-1, "a"), t0, "").lease;
    LeaseRequest brk{LeaseAction::break_};
    brk.break_period = 10;
    LeaseOutcome breaking = apply_lease(held, brk, t0, "");
    EXPECT_EQ(breaking.status, 202);
    EXPECT_EQ(breaking.break_seconds, 10);
    EXPECT_EQ(breaking.lease.state(t0 + seconds(9)), LeaseState::breaking);
    EXPECT_TRUE(breaking.lease.locked(t0 + seconds(9)));
    EXPECT_EQ(code_of([&] { apply_lease(breaking.lease, acquire(-1, "a"), t0, ""); }),
              "409 LeaseIsBreakingAndCannotBeAcquired");
    EXPECT_EQ(code_of([&] { apply_lease(breaking.lease, acquire(-1, "b"), t0, ""); }), "409 LeaseAlreadyPresent");
    EXPECT_EQ(code_of([&] { apply_lease(breaking.lease, with_id(LeaseAction::renew, "a"), t0, ""); }),
              "409 LeaseIsBrokenAndCannotBeRenewed");
    // A shorter period brings the break forward; a longer one does not put it off.
    brk.break_period = 2;
    EXPECT_EQ(apply_lease(breaking.lease, brk, t0 + seconds(1), "").break_seconds, 2);
    brk.break_period = 60;
    EXPECT_EQ(apply_lease(breaking.lease, brk, t0 + seconds(1), "").break_seconds, 9);
    EXPECT_EQ(breaking.lease.state(t0 + seconds(10)), LeaseState::broken);
    EXPECT_FALSE(breaking.lease.locked(t0 + seconds(10)));
    EXPECT_EQ(apply_lease(breaking.lease, acquire(-1, "b"), t0 + seconds(10), "").lease.id, "b");
    // A fixed lease breaks at its expiry when that comes first; without a lease, nothing to break.
    Lease fixed = apply_lease(Lease{}, acquire(15, "f"), t0, "").lease;
    brk.break_period = 60;
    EXPECT_EQ(apply_lease(fixed, brk, t0 + seconds(5), "").break_seconds, 10);
    EXPECT_EQ(code_of([&] { apply_lease(Lease{}, brk, t0, ""); }), "409 LeaseNotPresentWithLeaseOperation");
}

TEST(Lease, OperationsOnALeasedResourceNeedItsId) {
    Lease held = apply_lease(Lease{}, acquire(-1, "a"), t0, "").lease;
    EXPECT_EQ(code_of([&] { check_lease_for_write(held, std::nullopt, t0, LeaseTarget::blob); }), "412 LeaseIdMissing");
    EXPECT_EQ(code_of([&] { check_lease_for_write(held, "b", t0, LeaseTarget::blob); }),
              "412 LeaseIdMismatchWithBlobOperation");
    EXPECT_EQ(code_of([&] { check_lease_for_write(held, "A", t0, LeaseTarget::blob); }), "no error");
    EXPECT_EQ(code_of([&] { check_lease_for_write(Lease{}, "a", t0, LeaseTarget::container); }),
              "412 LeaseNotPresentWithContainerOperation");
    EXPECT_EQ(code_of([&] { check_lease_if_named(held, std::nullopt, t0, LeaseTarget::container); }), "no error");
    EXPECT_EQ(code_of([&] { check_lease_if_named(held, "b", t0, LeaseTarget::container); }),
              "412 LeaseIdMismatchWithContainerOperation");
    // Reported as the service reports it.
    LeaseReport report = report_lease(held, t0);
    EXPECT_EQ(std::string(report.status) + " " + report.state + " " + report.duration, "locked leased infinite");
    LeaseRequest brk{LeaseAction::break_};
    brk.break_period = 5;
    LeaseReport breaking = report_lease(apply_lease(held, brk, t0, "").lease, t0);
    EXPECT_EQ(std::string(breaking.status) + " " + breaking.state, "locked breaking");
    EXPECT_EQ(breaking.duration, nullptr);
    EXPECT_EQ(std::string(report_lease(Lease{}, t0).status) + " " + report_lease(Lease{}, t0).state, "unlocked available");
    // Stored and read back.
    EXPECT_EQ(lease_from_json(lease_to_json(held)).id, "a");
    EXPECT_EQ(lease_from_json(lease_to_json(held)).duration, -1);
    EXPECT_TRUE(lease_from_json("").id.empty());
    EXPECT_TRUE(lease_from_json("{not json").id.empty());
}

}  // namespace
}  // namespace bai::storage
