// The Batch pools of every account, as the documents the service returns, in SQLite (state.db):
// pool ids are unique per account without regard to case and keep the case they were added with.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/db/database.h"

namespace bai::batch {

struct StoredPool {
    std::string account;
    nlohmann::json body;  // as GET answers it, without the account-specific url and odata fields
    std::string etag;     // "0x8D..." (Batch sends it without quotes)
    std::int64_t modified_ticks = 0;
};

class PoolStore {
public:
    explicit PoolStore(db::Database& db) : db_(db) {}
    static void migrate(db::Database& db);

    // False (nothing written) when the account has a pool of that id.
    bool add(const std::string& account, const nlohmann::json& body);
    std::optional<StoredPool> get(const std::string& account, const std::string& id) const;
    // Read-modify-write in one transaction; `change` returns false to leave it as it was.
    std::optional<StoredPool> update(const std::string& account, const std::string& id,
                                     const std::function<bool(nlohmann::json&)>& change);
    bool remove(const std::string& account, const std::string& id);
    // In the order they were added, after `after_seq`, at most `limit`; the seq to continue after
    // when there is more.
    std::vector<StoredPool> list(const std::string& account, std::int64_t after_seq, int limit,
                                 std::optional<std::int64_t>& next_after) const;

    // Every pool of every account, in the order they were added.
    std::vector<StoredPool> all() const;

private:
    db::Database& db_;
};

}  // namespace bai::batch
