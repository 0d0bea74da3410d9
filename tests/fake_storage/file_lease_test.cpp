// Lease File in the FileStore: infinite leases only, no renew, a break that breaks at once, and
// every write of a leased file refused without its id, with nothing changed.
#include <gtest/gtest.h>
#include <unistd.h>

#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/http/lease_headers.h"
#include "tests/fake_storage/error_code.h"
#include "tests/fake_storage/file_store_fixture.h"

namespace bai::storage {
namespace {

using bai::testing::kAcct;
using testing::code_of;

constexpr const char* kId = "6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10";
constexpr const char* kOther = "0e5e3a51-8a7c-4a54-9f2b-6b0f8c2c1f22";

class FileLeaseTest : public FileStoreTest {
protected:
    FileLeaseTest() : FileStoreTest("data") {}

    void SetUp() override {
        FileStoreTest::SetUp();
        store->create_file(kAcct, "data", "f.txt", 4, {}, {{"m", "1"}}, {});
    }
    LeaseOutcome lease(LeaseAction action, std::optional<std::string> id = std::nullopt,
                       std::optional<std::string> proposed = std::nullopt, std::optional<int> duration = std::nullopt) {
        LeaseRequest r{action, std::move(id), std::move(proposed), duration, std::nullopt};
        return store->lease_file(kAcct, "data", "f.txt", r).first;
    }
    void write(const std::string& bytes, const std::optional<std::string>& id) {
        auto writer = files->begin(false);
        writer->append(bytes);
        store->put_range(kAcct, "data", "f.txt", 0, *writer, id);
    }
    std::string content() {
        OpenFile f = store->open_file(kAcct, "data", "f.txt");
        std::string out(f.info.size, '\0');
        EXPECT_EQ(::pread(f.fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }
};

TEST_F(FileLeaseTest, AcquiredLeaseIsInfiniteAndKeptWithTheFile) {
    LeaseOutcome acquired = lease(LeaseAction::acquire, std::nullopt, kId, -1);
    EXPECT_EQ(acquired.status, 201);
    EXPECT_EQ(acquired.lease.id, kId);
    ShareEntry e = store->get_file(kAcct, "data", "f.txt");
    const LeaseReport report = report_lease(e.lease, time::now());
    EXPECT_STREQ(report.state, "leased");
    EXPECT_STREQ(report.status, "locked");
    EXPECT_STREQ(report.duration, "infinite");
    EXPECT_TRUE(store->file_leased(kAcct, "data", "F.TXT"));  // the index's names ignore case
    // A new id without a proposed one.
    lease(LeaseAction::release, kId);
    EXPECT_FALSE(store->file_leased(kAcct, "data", "f.txt"));
    EXPECT_EQ(lease(LeaseAction::acquire, std::nullopt, std::nullopt, -1).lease.id.size(), 36u);
}

TEST_F(FileLeaseTest, OnlyInfiniteLeasesAndNoRenew) {
    EXPECT_EQ(code_of([&] { lease(LeaseAction::acquire, std::nullopt, kId, 15); }), "400 InvalidHeaderValue");
    EXPECT_EQ(code_of([&] { lease(LeaseAction::acquire, std::nullopt, kId, 60); }), "400 InvalidHeaderValue");
    EXPECT_FALSE(store->file_leased(kAcct, "data", "f.txt"));
    lease(LeaseAction::acquire, std::nullopt, kId, -1);
    EXPECT_EQ(code_of([&] { lease(LeaseAction::renew, kId); }), "400 InvalidHeaderValue");
}

TEST_F(FileLeaseTest, LeaseOperationsRefusalsAreTheServices) {
    EXPECT_EQ(code_of([&] { lease(LeaseAction::release, kId); }), "409 LeaseIdMismatchWithLeaseOperation");
    EXPECT_EQ(code_of([&] { lease(LeaseAction::break_); }), "409 LeaseNotPresentWithLeaseOperation");
    lease(LeaseAction::acquire, std::nullopt, kId, -1);
    EXPECT_EQ(code_of([&] { lease(LeaseAction::acquire, std::nullopt, kOther, -1); }), "409 LeaseAlreadyPresent");
    EXPECT_EQ(code_of([&] { lease(LeaseAction::change, kOther, kId); }), "no error");  // a retried change
    EXPECT_EQ(code_of([&] { lease(LeaseAction::change, kOther, std::nullopt); }), "400 MissingRequiredHeader");
    EXPECT_EQ(lease(LeaseAction::change, kId, kOther).lease.id, kOther);
    EXPECT_EQ(code_of([&] { lease(LeaseAction::release, kId); }), "409 LeaseIdMismatchWithLeaseOperation");
    EXPECT_EQ(code_of([&] { store->lease_file(kAcct, "data", "missing.txt", {LeaseAction::break_}); }),
              "404 ResourceNotFound");
    store->create_directory(kAcct, "data", "dir", {}, {});
    EXPECT_EQ(code_of([&] { store->lease_file(kAcct, "data", "dir", {LeaseAction::break_}); }), "404 ResourceNotFound");
}

TEST_F(FileLeaseTest, BreakEndsTheLeaseAtOnce) {
    lease(LeaseAction::acquire, std::nullopt, kId, -1);
    LeaseRequest r{LeaseAction::break_, std::nullopt, std::nullopt, std::nullopt, 60};  // no break period for files
    LeaseOutcome broken = store->lease_file(kAcct, "data", "f.txt", r).first;
    EXPECT_EQ(broken.status, 202);
    EXPECT_EQ(broken.break_seconds, 0);
    EXPECT_STREQ(report_lease(store->get_file(kAcct, "data", "f.txt").lease, time::now()).state, "broken");
    EXPECT_FALSE(store->file_leased(kAcct, "data", "f.txt"));
    write("abcd", std::nullopt);  // a broken lease guards nothing
    EXPECT_EQ(lease(LeaseAction::acquire, std::nullopt, kOther, -1).lease.id, kOther);
}

TEST_F(FileLeaseTest, WritesOfALeasedFileNeedItsId) {
    lease(LeaseAction::acquire, std::nullopt, kId, -1);
    const ShareEntry before = store->get_file(kAcct, "data", "f.txt");
    EXPECT_EQ(code_of([&] { write("abcd", std::nullopt); }), "412 LeaseIdMissing");
    EXPECT_EQ(code_of([&] { write("abcd", std::string(kOther)); }), "412 LeaseIdMismatchWithFileOperation");
    EXPECT_EQ(code_of([&] { store->clear_range(kAcct, "data", "f.txt", 0, 4); }), "412 LeaseIdMissing");
    EXPECT_EQ(code_of([&] { store->set_file_properties(kAcct, "data", "f.txt", 1, std::nullopt, {}); }),
              "412 LeaseIdMissing");
    EXPECT_EQ(code_of([&] { store->set_file_metadata(kAcct, "data", "f.txt", {{"m", "2"}}, std::string(kOther)); }),
              "412 LeaseIdMismatchWithFileOperation");
    EXPECT_EQ(code_of([&] { store->create_file(kAcct, "data", "f.txt", 9, {}, {}, {}); }), "412 LeaseIdMissing");
    EXPECT_EQ(code_of([&] { store->delete_file(kAcct, "data", "f.txt"); }), "412 LeaseIdMissing");
    FileStore::RenameOptions o;
    EXPECT_EQ(code_of([&] { store->rename(kAcct, "data", "f.txt", "g.txt", false, o); }), "412 LeaseIdMissing");
    store->create_file(kAcct, "data", "other.txt", 1, {}, {}, {});
    o.replace_if_exists = true;
    EXPECT_EQ(code_of([&] { store->rename(kAcct, "data", "other.txt", "f.txt", false, o); }), "412 LeaseIdMissing");

    // Nothing changed.
    const ShareEntry after = store->get_file(kAcct, "data", "f.txt");
    EXPECT_EQ(after.etag, before.etag);
    EXPECT_EQ(after.size, 4u);
    EXPECT_EQ(after.metadata, before.metadata);
    EXPECT_EQ(content(), std::string(4, '\0'));

    // With the id, each goes through, and the lease stays with the file.
    write("abcd", std::string(kId));
    EXPECT_EQ(content(), "abcd");
    store->set_file_metadata(kAcct, "data", "f.txt", {{"m", "2"}}, std::string(kId));
    store->create_file(kAcct, "data", "f.txt", 2, {}, {}, {}, false, std::string(kId));
    EXPECT_TRUE(store->file_leased(kAcct, "data", "f.txt"));
    o = {};
    o.source_lease_id = kId;
    store->rename(kAcct, "data", "f.txt", "g.txt", false, o);
    EXPECT_TRUE(store->file_leased(kAcct, "data", "g.txt"));
    EXPECT_EQ(code_of([&] { store->delete_file(kAcct, "data", "g.txt", std::string(kOther)); }),
              "412 LeaseIdMismatchWithFileOperation");
    store->delete_file(kAcct, "data", "g.txt", std::string(kId));
}

TEST_F(FileLeaseTest, AnIdWhereNoLeaseIsHeldIsRefused) {
    EXPECT_EQ(code_of([&] { write("abcd", std::string(kId)); }), "412 LeaseNotPresentWithFileOperation");
    EXPECT_EQ(content(), std::string(4, '\0'));
}

TEST_F(FileLeaseTest, ASnapshotsFilesHaveNoLease) {
    lease(LeaseAction::acquire, std::nullopt, kId, -1);
    ShareInfo snapshot = store->snapshot_share(kAcct, "data", std::nullopt);
    ShareEntry copy = store->get_file(kAcct, share_snapshot_key("data", snapshot.snapshot), "f.txt");
    EXPECT_TRUE(copy.lease.id.empty());
}

TEST(LeaseIdTest, GuidsInDotNetsFormsOnly) {
    EXPECT_TRUE(is_lease_id(kId));
    EXPECT_TRUE(is_lease_id("6BB1A5A44C434F4B9A5B2B5C0C3B1D10"));
    EXPECT_TRUE(is_lease_id("{6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10}"));
    EXPECT_TRUE(is_lease_id("(6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10)"));
    for (const char* bad : {"", "lease", "6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d1", "6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10x",
                            "6bb1a5a44-c43-4f4b-9a5b-2b5c0c3b1d10", "g bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10",
                            "{6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10)", "{6bb1a5a44c434f4b9a5b2b5c0c3b1d10}"}) {
        EXPECT_FALSE(is_lease_id(bad)) << bad;
    }
}

}  // namespace
}  // namespace bai::storage
