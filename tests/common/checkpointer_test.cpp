// WAL checkpoints on a thread and connection of their own (the daemon's mode).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "common/db/checkpointer.h"
#include "common/db/database.h"
#include "tests/common/test_dir.h"

namespace bai::db {
namespace {

using namespace std::chrono_literals;

constexpr std::array kNotesSchema = {Migration{1, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"}};

std::int64_t notes_in(Database& db) {
    auto q = db.prepare("SELECT count(*) FROM notes");
    return q.step() ? q.column_int(0) : -1;
}

TEST(BackgroundCheckpoints, RefuseExclusiveMode) {
    testing::TestDir dir;
    EXPECT_THROW(Database::open(dir / "state.db", {.exclusive = true, .background_checkpoints = true}),
                 std::logic_error);
}

TEST(BackgroundCheckpoints, TheCheckpointThreadCheckpointsAndKeepsEveryRow) {
    testing::TestDir dir;
    const auto path = dir / "state.db";
    auto db = Database::open(path);
    db->migrate("notes", kNotesSchema);
    Checkpointer checkpointer(db->handle(), path);
    const std::string text(3000, 'x');
    const int rows = 3 * Checkpointer::kInlinePages;  // a frame or more each
    for (int i = 0; i < rows; ++i) {
        db->transaction([&](Database& d) { d.prepare("INSERT INTO notes(text) VALUES (?1)").bind(1, text).run(); });
    }
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (checkpointer.completed() == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    EXPECT_GT(checkpointer.completed(), 0);
    // The WAL started over rather than growing with every row written.
    EXPECT_LT(std::filesystem::file_size(path.string() + "-wal"), 2u * Checkpointer::kInlinePages * 4096u);
    EXPECT_EQ(notes_in(*db), rows);
}

}  // namespace
}  // namespace bai::db
