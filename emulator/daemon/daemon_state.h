// The daemon's own rows in state.db: one per start, closed at a clean stop, so that a start
// can tell that the previous run died (and later issues can requeue what it was running).
#pragma once

#include <optional>
#include <string>

#include "common/db/database.h"

namespace bai::daemon {

struct PreviousRun {
    long pid = 0;
    std::string started_at;
    bool stopped_cleanly = false;
};

void migrate_daemon_schema(db::Database& db);
std::optional<PreviousRun> last_run(db::Database& db);
// Records this start; returns its id.
long record_start(db::Database& db, long pid, const std::string& version);
void record_stop(db::Database& db, long run_id);

}  // namespace bai::daemon
