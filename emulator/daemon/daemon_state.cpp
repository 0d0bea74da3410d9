#include "emulator/daemon/daemon_state.h"

#include <array>

namespace bai::daemon {

void migrate_daemon_schema(db::Database& db) {
    static constexpr std::array migrations = {
        db::Migration{1,
                      "CREATE TABLE daemon_runs ("
                      " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                      " pid INTEGER NOT NULL,"
                      " version TEXT NOT NULL,"
                      " started_at TEXT NOT NULL,"
                      " stopped_at TEXT)"},
    };
    db.migrate("daemon", migrations);
}

std::optional<PreviousRun> last_run(db::Database& db) {
    std::optional<PreviousRun> run;
    db.read([&](db::Database& d) {
        auto q = d.prepare(
            "SELECT pid, started_at, stopped_at IS NOT NULL FROM daemon_runs ORDER BY id DESC "
            "LIMIT 1");
        if (q.step()) {
            run = PreviousRun{static_cast<long>(q.column_int(0)), q.column_text(1),
                              q.column_int(2) != 0};
        }
    });
    return run;
}

long record_start(db::Database& db, long pid, const std::string& version) {
    long id = 0;
    db.transaction([&](db::Database& d) {
        d.prepare(
             "INSERT INTO daemon_runs(pid, version, started_at)"
             " VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))")
            .bind(1, static_cast<std::int64_t>(pid))
            .bind(2, version)
            .run();
        id = static_cast<long>(sqlite3_last_insert_rowid(d.handle()));
    });
    return id;
}

void record_stop(db::Database& db, long run_id) {
    db.transaction([&](db::Database& d) {
        d.prepare("UPDATE daemon_runs SET stopped_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
                  " WHERE id = ?1")
            .bind(1, static_cast<std::int64_t>(run_id))
            .run();
    });
}

}  // namespace bai::daemon
