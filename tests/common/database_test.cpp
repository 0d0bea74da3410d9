#include "common/db/database.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

#include "tests/common/test_dir.h"

namespace bai::db {
namespace {

constexpr std::array kNotes = {
    Migration{1, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"},
    Migration{2, "ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'nobody'"},
};

std::int64_t count_notes(Database& db) {
    auto q = db.prepare("SELECT count(*) FROM notes");
    EXPECT_TRUE(q.step());
    return q.column_int(0);
}

TEST(Database, OpensInWalMode) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    EXPECT_EQ(db->journal_mode(), "wal");
}

TEST(Database, ExclusiveModeKeepsOtherConnectionsOut) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db", {.exclusive = true});
    db->migrate("notes", kNotes);
    db->exec("INSERT INTO notes(text) VALUES ('mine')");
    EXPECT_EQ(db->journal_mode(), "wal");
    EXPECT_THROW(Database::open(dir / "state.db", {.exclusive = false, .busy_timeout_ms = 50}),
                 DatabaseError);
}

TEST(Database, AppliesMigrationsInOrderOnce) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    EXPECT_EQ(db->schema_version("notes"), 0);
    db->migrate("notes", std::span(kNotes).first(1));
    EXPECT_EQ(db->schema_version("notes"), 1);
    db->exec("INSERT INTO notes(text) VALUES ('kept')");
    db->migrate("notes", kNotes);
    EXPECT_EQ(db->schema_version("notes"), 2);
    db->migrate("notes", kNotes);  // nothing left to apply
    auto q = db->prepare("SELECT text, author FROM notes");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.column_text(0), "kept");
    EXPECT_EQ(q.column_text(1), "nobody");
}

TEST(Database, ComponentsHaveSeparateVersions) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    db->migrate("notes", kNotes);
    constexpr std::array other = {Migration{1, "CREATE TABLE other (x INTEGER)"}};
    db->migrate("other", other);
    EXPECT_EQ(db->schema_version("notes"), 2);
    EXPECT_EQ(db->schema_version("other"), 1);
}

TEST(Database, RefusesASchemaNewerThanTheProgram) {
    testing::TestDir dir;
    {
        auto db = Database::open(dir / "state.db");
        db->migrate("notes", kNotes);
    }
    auto db = Database::open(dir / "state.db");
    EXPECT_THROW(db->migrate("notes", std::span(kNotes).first(1)), DatabaseError);
    EXPECT_EQ(db->schema_version("notes"), 2);
}

TEST(Database, AFailedMigrationChangesNothing) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    constexpr std::array broken = {
        Migration{1, "CREATE TABLE half (x INTEGER)"},
        Migration{2, "THIS IS NOT SQL"},
    };
    EXPECT_THROW(db->migrate("half", broken), DatabaseError);
    EXPECT_EQ(db->schema_version("half"), 0);
    EXPECT_THROW(db->exec("SELECT * FROM half"), DatabaseError);
}

TEST(Database, RejectsMigrationsOutOfOrder) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    constexpr std::array unordered = {Migration{2, "SELECT 1"}, Migration{1, "SELECT 1"}};
    EXPECT_THROW(db->migrate("x", unordered), std::logic_error);
}

TEST(Database, TransactionRollsBackOnException) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    db->migrate("notes", kNotes);
    EXPECT_THROW(db->transaction([](Database& d) {
        d.exec("INSERT INTO notes(text) VALUES ('lost')");
        throw std::runtime_error("abort");
    }),
                 std::runtime_error);
    EXPECT_EQ(count_notes(*db), 0);
    db->transaction([](Database& d) { d.exec("INSERT INTO notes(text) VALUES ('kept')"); });
    EXPECT_EQ(count_notes(*db), 1);
}

TEST(Database, ANestedTransactionCommitsWithTheOuterOne) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    db->migrate("notes", kNotes);
    EXPECT_THROW(db->transaction([](Database& d) {
        d.transaction([](Database& inner) { inner.exec("INSERT INTO notes(text) VALUES ('inner')"); });
        d.exec("INSERT INTO notes(text) VALUES ('outer')");
        throw std::runtime_error("abort");
    }),
                 std::runtime_error);
    EXPECT_EQ(count_notes(*db), 0);
    db->transaction([](Database& d) {
        d.transaction([](Database& inner) { inner.exec("INSERT INTO notes(text) VALUES ('inner')"); });
        d.exec("INSERT INTO notes(text) VALUES ('outer')");
    });
    EXPECT_EQ(count_notes(*db), 2);
}

TEST(Database, AFailedSavepointUndoesOnlyItsOwnWrites) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    db->migrate("notes", kNotes);
    db->transaction([](Database& d) {
        d.exec("INSERT INTO notes(text) VALUES ('before')");
        EXPECT_THROW(d.savepoint([](Database& inner) {
            inner.exec("INSERT INTO notes(text) VALUES ('undone')");
            throw std::runtime_error("abort");
        }),
                     std::runtime_error);
        d.savepoint([](Database& inner) { inner.exec("INSERT INTO notes(text) VALUES ('after')"); });
    });
    auto q = db->prepare("SELECT group_concat(text, ',') FROM (SELECT text FROM notes ORDER BY rowid)");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.column_text(0), "before,after");
}

TEST(Database, CommittedRowsSurviveReopening) {
    testing::TestDir dir;
    {
        auto db = Database::open(dir / "state.db");
        db->migrate("notes", kNotes);
        db->transaction([](Database& d) {
            d.prepare("INSERT INTO notes(text) VALUES (?1)").bind(1, std::string_view("a\0b", 3)).run();
        });
    }
    auto db = Database::open(dir / "state.db");
    auto q = db->prepare("SELECT text FROM notes");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.column_text(0), std::string("a\0b", 3));
}

TEST(Database, TheSameStatementCanBeUsedWhileItIsAlreadyInUse) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    db->migrate("notes", kNotes);
    db->exec("INSERT INTO notes(text) VALUES ('a'), ('b')");
    const char* sql = "SELECT text FROM notes ORDER BY text";
    std::string pairs;
    auto outer = db->prepare(sql);
    while (outer.step()) {
        auto inner = db->prepare(sql);  // the cached statement is busy: a fresh one
        while (inner.step()) pairs += outer.column_text(0) + inner.column_text(0) + " ";
    }
    EXPECT_EQ(pairs, "aa ab ba bb ");
    // Once handed back, the cached statement starts from the first row with no old bindings.
    for (int round = 0; round < 2; ++round) {
        auto q = db->prepare("SELECT count(*) FROM notes WHERE text = ?1");
        q.bind(1, std::string_view("a"));
        ASSERT_TRUE(q.step());
        EXPECT_EQ(q.column_int(0), 1);
    }
}

TEST(Database, BadSqlNamesTheProblem) {
    testing::TestDir dir;
    auto db = Database::open(dir / "state.db");
    try {
        db->prepare("SELECT * FROM missing_table");
        FAIL() << "no exception";
    } catch (const DatabaseError& e) {
        EXPECT_NE(std::string(e.what()).find("missing_table"), std::string::npos) << e.what();
    }
}

TEST(Database, OpeningAnUnwritablePathFails) {
    EXPECT_THROW(Database::open("/proc/no/such/dir/state.db"), DatabaseError);
}

}  // namespace
}  // namespace bai::db
