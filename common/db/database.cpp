#include "common/db/database.h"

#include <algorithm>

#include "common/db/checkpointer.h"

namespace bai::db {

void throw_error(sqlite3* db, int code, std::string_view context) {
    std::string message(context);
    message += ": ";
    message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    throw DatabaseError(message, code);
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
    int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) throw_error(db, rc, "prepare");
}

Statement::Statement(sqlite3* db, sqlite3_stmt* cached, bool* in_use)
    : db_(db), stmt_(cached), in_use_(in_use) {
    *in_use_ = true;
}

Statement::~Statement() {
    if (in_use_ == nullptr) {
        sqlite3_finalize(stmt_);
    } else if (stmt_ != nullptr) {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
        *in_use_ = false;
    }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), in_use_(other.in_use_) {
    other.stmt_ = nullptr;
    other.in_use_ = nullptr;
}

Statement& Statement::bind(int index, std::int64_t value) {
    int rc = sqlite3_bind_int64(stmt_, index, value);
    if (rc != SQLITE_OK) throw_error(db_, rc, "bind");
    return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
    int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                 SQLITE_UTF8);
    if (rc != SQLITE_OK) throw_error(db_, rc, "bind");
    return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
    int rc = sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) throw_error(db_, rc, "bind");
    return *this;
}

Statement& Statement::bind_null(int index) {
    int rc = sqlite3_bind_null(stmt_, index);
    if (rc != SQLITE_OK) throw_error(db_, rc, "bind");
    return *this;
}

bool Statement::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw_error(db_, rc, "step");
}

void Statement::run() {
    while (step()) {
    }
    reset();
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int(int column) const {
    return sqlite3_column_int64(stmt_, column);
}

std::string Statement::column_text(int column) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    int size = sqlite3_column_bytes(stmt_, column);
    return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), size);
}

sqlite3* open_connection(const std::filesystem::path& path, int flags) {
    sqlite3* handle = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &handle, flags | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string context = "open " + path.string();
        if (handle == nullptr) throw_error(nullptr, rc, context);
        DatabaseError error(context + ": " + sqlite3_errmsg(handle), rc);
        sqlite3_close(handle);
        throw error;
    }
    return handle;
}

std::unique_ptr<Database> Database::open(const std::filesystem::path& path, OpenOptions options) {
    if (options.exclusive && options.background_checkpoints) {
        throw std::logic_error("background checkpoints need a shared database, not exclusive");
    }
    sqlite3* handle = open_connection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    std::unique_ptr<Database> db(new Database(handle));
    sqlite3_busy_timeout(handle, options.busy_timeout_ms);
    sqlite3_extended_result_codes(handle, 1);
    if (options.exclusive) db->exec("PRAGMA locking_mode=EXCLUSIVE");
    db->exec("PRAGMA journal_mode=WAL");
    db->exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    db->exec("PRAGMA foreign_keys=ON");
    db->exec("PRAGMA temp_store=MEMORY");  // savepoint journals
    db->exec("PRAGMA journal_size_limit=67108864");  // a WAL grown under load shrinks back to 64 MiB
    db->exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " component TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at TEXT NOT NULL)");
    if (options.background_checkpoints) db->checkpointer_ = std::make_unique<Checkpointer>(handle, path);
    return db;
}

Database::Database(sqlite3* db) : db_(db) {}

Database::~Database() {
    checkpointer_.reset();
    for (auto& [sql, cached] : statements_) sqlite3_finalize(cached->stmt);
    sqlite3_close_v2(db_);
}

void Database::exec(std::string_view sql) {
    std::lock_guard lock(mutex_);
    std::string text(sql);
    char* error = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        std::string message = error != nullptr ? error : sqlite3_errstr(rc);
        sqlite3_free(error);
        throw DatabaseError("exec: " + message, rc);
    }
}

Statement Database::prepare(std::string_view sql) {
    std::lock_guard lock(mutex_);
    auto it = statements_.find(std::string(sql));
    if (it == statements_.end()) {
        auto cached = std::make_unique<CachedStatement>();
        int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &cached->stmt, nullptr);
        if (rc != SQLITE_OK) throw_error(db_, rc, "prepare");
        it = statements_.emplace(std::string(sql), std::move(cached)).first;
    }
    if (it->second->in_use) return Statement(db_, sql);
    return Statement(db_, it->second->stmt, &it->second->in_use);
}

void Database::transaction(const std::function<void(Database&)>& f) {
    std::lock_guard lock(mutex_);
    // The mutex is held across a whole transaction, so one already open is this thread's own.
    if (sqlite3_get_autocommit(db_) == 0) return f(*this);
    prepare("BEGIN IMMEDIATE").run();
    try {
        f(*this);
        prepare("COMMIT").run();
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void Database::savepoint(const std::function<void(Database&)>& f) {
    std::lock_guard lock(mutex_);
    if (sqlite3_get_autocommit(db_) != 0) return transaction(f);
    prepare("SAVEPOINT nested").run();
    try {
        f(*this);
        prepare("RELEASE nested").run();
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK TO nested; RELEASE nested", nullptr, nullptr, nullptr);
        throw;
    }
}

void Database::read(const std::function<void(Database&)>& f) {
    std::lock_guard lock(mutex_);
    f(*this);
}

int Database::schema_version(std::string_view component) {
    std::lock_guard lock(mutex_);
    Statement query = prepare("SELECT version FROM schema_migrations WHERE component = ?1");
    query.bind(1, component);
    return query.step() ? static_cast<int>(query.column_int(0)) : 0;
}

void Database::migrate(std::string_view component, std::span<const Migration> migrations) {
    std::lock_guard lock(mutex_);
    int newest_known = 0;
    for (const Migration& m : migrations) {
        if (m.version <= newest_known) {
            throw std::logic_error("migrations of " + std::string(component) +
                                   " must have increasing versions");
        }
        newest_known = m.version;
    }
    transaction([&](Database& db) {
        int current = db.schema_version(component);
        if (current > newest_known) {
            throw DatabaseError("schema of " + std::string(component) + " is at version " +
                                    std::to_string(current) + ", newer than this program (" +
                                    std::to_string(newest_known) + ")",
                                SQLITE_MISMATCH);
        }
        for (const Migration& m : migrations) {
            if (m.version <= current) continue;
            db.exec(m.sql);
            current = m.version;
        }
        Statement record = db.prepare(
            "INSERT INTO schema_migrations(component, version, applied_at)"
            " VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
            " ON CONFLICT(component) DO UPDATE SET version = excluded.version,"
            " applied_at = excluded.applied_at WHERE version <> excluded.version");
        record.bind(1, component).bind(2, static_cast<std::int64_t>(current)).run();
    });
}

std::string Database::journal_mode() {
    std::lock_guard lock(mutex_);
    Statement query = prepare("PRAGMA journal_mode");
    return query.step() ? query.column_text(0) : std::string();
}

}  // namespace bai::db
