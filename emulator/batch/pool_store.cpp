#include "emulator/batch/pool_store.h"

#include <algorithm>
#include <cstdio>

#include "common/text/ascii.h"
#include "common/time/timestamps.h"

namespace bai::batch {
namespace {

constexpr db::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE batch_pools(
  seq INTEGER PRIMARY KEY,
  account TEXT NOT NULL,
  lower_id TEXT NOT NULL,
  body TEXT NOT NULL,
  etag TEXT NOT NULL,
  modified_ticks INTEGER NOT NULL,
  UNIQUE(account, lower_id)
);
)sql"},
};

std::string make_etag(std::int64_t ticks) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llX", static_cast<unsigned long long>(ticks));
    return text;
}

StoredPool read_row(db::Statement& s) {
    return {s.column_text(0), nlohmann::json::parse(s.column_text(1)), s.column_text(2), s.column_int(3)};
}

}  // namespace

void PoolStore::migrate(db::Database& db) { db.migrate("batch", kMigrations); }

bool PoolStore::add(const std::string& account, const nlohmann::json& body) {
    bool added = false;
    db_.transaction([&](db::Database& db) {
        auto exists = db.prepare("SELECT 1 FROM batch_pools WHERE account = ? AND lower_id = ?");
        exists.bind(1, account).bind(2, text::lower(body.value("id", "")));
        if (exists.step()) return;
        std::int64_t ticks = time::to_ticks(time::now());
        auto insert = db.prepare(
            "INSERT INTO batch_pools(account, lower_id, body, etag, modified_ticks) VALUES (?, ?, ?, ?, ?)");
        insert.bind(1, account).bind(2, text::lower(body.value("id", ""))).bind(3, body.dump());
        insert.bind(4, make_etag(ticks)).bind(5, ticks);
        insert.run();
        added = true;
    });
    return added;
}

std::optional<StoredPool> PoolStore::get(const std::string& account, const std::string& id) const {
    std::optional<StoredPool> found;
    db_.read([&](db::Database& db) {
        auto s = db.prepare("SELECT account, body, etag, modified_ticks FROM batch_pools WHERE account = ? AND lower_id = ?");
        s.bind(1, account).bind(2, text::lower(id));
        if (s.step()) found = read_row(s);
    });
    return found;
}

std::optional<StoredPool> PoolStore::update(const std::string& account, const std::string& id,
                                            const std::function<bool(nlohmann::json&)>& change) {
    std::optional<StoredPool> result;
    db_.transaction([&](db::Database& db) {
        auto s = db.prepare("SELECT account, body, etag, modified_ticks FROM batch_pools WHERE account = ? AND lower_id = ?");
        s.bind(1, account).bind(2, text::lower(id));
        if (!s.step()) return;
        StoredPool pool = read_row(s);
        s.reset();
        if (change(pool.body)) {
            pool.modified_ticks = std::max(time::to_ticks(time::now()), pool.modified_ticks + 1);
            pool.etag = make_etag(pool.modified_ticks);
            auto write = db.prepare("UPDATE batch_pools SET body = ?, etag = ?, modified_ticks = ? WHERE account = ? AND lower_id = ?");
            write.bind(1, pool.body.dump()).bind(2, pool.etag).bind(3, pool.modified_ticks).bind(4, account).bind(5, text::lower(id));
            write.run();
        }
        result = std::move(pool);
    });
    return result;
}

bool PoolStore::remove(const std::string& account, const std::string& id) {
    bool removed = false;
    db_.transaction([&](db::Database& db) {
        auto exists = db.prepare("SELECT 1 FROM batch_pools WHERE account = ? AND lower_id = ?");
        exists.bind(1, account).bind(2, text::lower(id));
        if (!exists.step()) return;
        exists.reset();
        auto s = db.prepare("DELETE FROM batch_pools WHERE account = ? AND lower_id = ?");
        s.bind(1, account).bind(2, text::lower(id));
        s.run();
        removed = true;
    });
    return removed;
}

std::vector<StoredPool> PoolStore::list(const std::string& account, std::int64_t after_seq, int limit,
                                        std::optional<std::int64_t>& next_after) const {
    std::vector<StoredPool> out;
    std::vector<std::int64_t> seqs;
    next_after.reset();
    db_.read([&](db::Database& db) {
        auto s = db.prepare(
            "SELECT account, body, etag, modified_ticks, seq FROM batch_pools WHERE account = ? AND seq > ? ORDER BY seq LIMIT ?");
        s.bind(1, account).bind(2, after_seq).bind(3, static_cast<std::int64_t>(limit) + 1);
        while (s.step()) {
            out.push_back(read_row(s));
            seqs.push_back(s.column_int(4));
        }
    });
    if (static_cast<int>(out.size()) > limit) {
        out.pop_back();
        next_after = seqs[static_cast<size_t>(limit) - 1];
    }
    return out;
}

std::vector<StoredPool> PoolStore::all() const {
    std::vector<StoredPool> out;
    db_.read([&](db::Database& db) {
        auto s = db.prepare("SELECT account, body, etag, modified_ticks FROM batch_pools ORDER BY seq");
        while (s.step()) out.push_back(read_row(s));
    });
    return out;
}

}  // namespace bai::batch
