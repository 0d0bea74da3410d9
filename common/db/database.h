// A SQLite database in WAL mode shared by the components, each of which owns its tables and
// brings them up to date with its own ordered list of migrations.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace bai::db {

class Checkpointer;

class DatabaseError : public std::runtime_error {
public:
    DatabaseError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
    int code() const { return code_; }

private:
    int code_;
};

// One prepared statement. Bind parameters are 1-based as in SQLite; columns are 0-based.
// Either owned (finalized on destruction) or borrowed from the connection's statement cache
// (reset and handed back on destruction).
class Statement {
public:
    Statement(sqlite3* db, std::string_view sql);
    Statement(sqlite3* db, sqlite3_stmt* cached, bool* in_use);
    ~Statement();
    Statement(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement& operator=(Statement&&) = delete;

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, std::string_view text);
    Statement& bind_blob(int index, std::string_view bytes);
    Statement& bind_null(int index);

    // Advances to the next row: true while a row is available, false when done.
    bool step();
    // Runs a statement that returns no rows.
    void run();
    void reset();

    bool is_null(int column) const;
    std::int64_t column_int(int column) const;
    std::string column_text(int column) const;

private:
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
    bool* in_use_ = nullptr;  // set when borrowed from the cache
};

// One schema change: applied once, in order, inside the transaction that records it.
struct Migration {
    int version;
    std::string_view sql;
};

struct OpenOptions {
    // FULL: every commit is on disk before it returns (power-loss safe). NORMAL (WAL): a commit
    // survives a crash of the process, and the last ones may be lost on a power loss.
    bool synchronous_full = false;
    // Only this connection uses the file (the daemon holds the data directory's lock): SQLite
    // then keeps the WAL index in memory and takes no file locks per statement. Other processes
    // (the sqlite3 shell) cannot read the database while it is open.
    bool exclusive = false;
    // Checkpoints on a thread and connection of their own (see checkpointer.h) rather than in
    // the commit that fills the WAL. Not with `exclusive`, which keeps other connections out.
    bool background_checkpoints = false;
    int busy_timeout_ms = 5000;
};

class Database {
public:
    static std::unique_ptr<Database> open(const std::filesystem::path& path,
                                          OpenOptions options = {});
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    void exec(std::string_view sql);
    // A statement for `sql`, prepared once per connection and reused (parsing is most of the
    // cost of a small query); a fresh one when the cached one is still in use.
    Statement prepare(std::string_view sql);

    // Runs f inside BEGIN IMMEDIATE ... COMMIT, serialised with every other use of this
    // connection; an exception rolls the transaction back and propagates. Called inside a
    // transaction, f joins it: its writes commit or roll back with the outer ones.
    void transaction(const std::function<void(Database&)>& f);
    // Inside a transaction: runs f in a savepoint, so that an exception undoes f's writes only
    // (and propagates) while what f wrote commits with the outer transaction. Outside one: a
    // transaction. Savepoints cost a journal of the pages they change; use them where a
    // failure must not undo the work around it.
    void savepoint(const std::function<void(Database&)>& f);
    // Serialises a read with the writers of this connection.
    void read(const std::function<void(Database&)>& f);

    // The version of `component`'s schema, 0 when it has none yet.
    int schema_version(std::string_view component);
    // Applies the migrations of `component` that are newer than its recorded version. Throws
    // when the database was written by a newer program (its version is above the last known).
    void migrate(std::string_view component, std::span<const Migration> migrations);

    std::string journal_mode();
    sqlite3* handle() { return db_; }

private:
    struct CachedStatement {
        sqlite3_stmt* stmt = nullptr;
        bool in_use = false;
    };

    explicit Database(sqlite3* db);

    sqlite3* db_;
    std::unique_ptr<Checkpointer> checkpointer_;
    std::recursive_mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<CachedStatement>> statements_;
};

[[noreturn]] void throw_error(sqlite3* db, int code, std::string_view context);
// A serialized-mode connection to `path` with the SQLITE_OPEN_* `flags`; DatabaseError naming the
// path when it cannot be opened.
sqlite3* open_connection(const std::filesystem::path& path, int flags);

}  // namespace bai::db
