// The storage engine's tables in state.db.
#pragma once

#include "common/db/database.h"

namespace bai::storage {

void migrate_storage_schema(db::Database& db);

}  // namespace bai::storage
