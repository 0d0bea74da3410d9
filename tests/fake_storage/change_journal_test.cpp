// The numbered change feed that mounts on other hosts follow.
#include "fake_storage/engine/change_journal.h"

#include <gtest/gtest.h>

#include <thread>

namespace bai::storage {
namespace {

using std::chrono::milliseconds;

TEST(ChangeJournal, AFirstReadGivesWhereToStartAndLaterOnesTheVolumesChangesOnce) {
    StoreChanges changes;
    ChangeJournal journal(changes);
    ChangeJournal::Read start = journal.read("acct", "data", "", std::nullopt, milliseconds(0));
    EXPECT_EQ(start.epoch, journal.epoch());
    EXPECT_TRUE(start.paths.empty());
    changes.publish("acct", "data", "a/b");
    changes.publish("acct", "other", "x");
    changes.publish("bcct", "data", "y");
    changes.publish("acct", "data", "a/b");
    changes.publish("acct", "data", "");
    ChangeJournal::Read read = journal.read("acct", "data", start.epoch, start.next, milliseconds(0));
    EXPECT_FALSE(read.everything);
    EXPECT_EQ(read.paths, (std::vector<std::string>{"a/b", ""}));
    EXPECT_EQ(read.next, start.next + 5);
    // Nothing since: an empty answer after the wait, at the same number.
    ChangeJournal::Read none = journal.read("acct", "data", read.epoch, read.next, milliseconds(10));
    EXPECT_TRUE(none.paths.empty());
    EXPECT_FALSE(none.everything);
    EXPECT_EQ(none.next, read.next);
}

TEST(ChangeJournal, AWaitingReaderIsWokenByAChangeOfItsVolume) {
    StoreChanges changes;
    ChangeJournal journal(changes);
    ChangeJournal::Read start = journal.read("acct", "data", "", std::nullopt, milliseconds(0));
    std::thread writer([&] {
        std::this_thread::sleep_for(milliseconds(50));
        changes.publish("acct", "other", "ignored");
        std::this_thread::sleep_for(milliseconds(50));
        changes.publish("acct", "data", "new");
    });
    const auto began = std::chrono::steady_clock::now();
    ChangeJournal::Read read = journal.read("acct", "data", start.epoch, start.next, milliseconds(20000));
    writer.join();
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(10));
    EXPECT_EQ(read.paths, (std::vector<std::string>{"new"}));
}

TEST(ChangeJournal, WhatIsNoLongerKeptOrOfAnotherRunMeansEverything) {
    StoreChanges changes;
    ChangeJournal journal(changes, 3);
    ChangeJournal::Read start = journal.read("acct", "data", "", std::nullopt, milliseconds(0));
    for (int i = 0; i < 5; ++i) changes.publish("acct", "data", "f" + std::to_string(i));
    EXPECT_TRUE(journal.read("acct", "data", start.epoch, start.next, milliseconds(0)).everything);
    // The last three are kept: from the second-last on, they are told.
    EXPECT_EQ(journal.read("acct", "data", start.epoch, start.next + 3, milliseconds(0)).paths,
              (std::vector<std::string>{"f3", "f4"}));
    EXPECT_TRUE(journal.read("acct", "data", "another-run", start.next + 3, milliseconds(0)).everything);
    EXPECT_TRUE(journal.read("acct", "data", start.epoch, start.next + 99, milliseconds(0)).everything);
}

TEST(ChangeJournal, ClosingWakesTheWaitingAndLaterReadsDoNotWait) {
    StoreChanges changes;
    ChangeJournal journal(changes);
    ChangeJournal::Read start = journal.read("acct", "data", "", std::nullopt, milliseconds(0));
    std::thread closer([&] {
        std::this_thread::sleep_for(milliseconds(50));
        journal.close();
    });
    const auto began = std::chrono::steady_clock::now();
    EXPECT_TRUE(journal.read("acct", "data", start.epoch, start.next, milliseconds(60000)).paths.empty());
    closer.join();
    EXPECT_TRUE(journal.read("acct", "data", start.epoch, start.next, milliseconds(60000)).paths.empty());
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(30));
}

}  // namespace
}  // namespace bai::storage
