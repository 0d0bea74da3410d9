#include "emulator/batch/entity_store.h"

#include <algorithm>
#include <cstdio>

#include "common/text/ascii.h"
#include "common/time/timestamps.h"

namespace bai::batch {
namespace {

constexpr db::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE batch_entities(
  seq INTEGER PRIMARY KEY,
  account TEXT NOT NULL,
  scope TEXT NOT NULL,
  lower_id TEXT NOT NULL,
  body TEXT NOT NULL,
  etag TEXT NOT NULL,
  modified_ticks INTEGER NOT NULL,
  UNIQUE(account, scope, lower_id)
);
)sql"},
};

constexpr const char* kColumns = "account, body, etag, modified_ticks";

std::string make_etag(std::int64_t ticks) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llX", static_cast<unsigned long long>(ticks));
    return text;
}

StoredEntity read_row(db::Statement& s) {
    return {s.column_text(0), nlohmann::json::parse(s.column_text(1)), s.column_text(2), s.column_int(3)};
}

}  // namespace

std::string tasks_of(const std::string& job_id) { return "jobs/" + text::lower(job_id) + "/tasks"; }

void EntityStore::migrate(db::Database& db) { db.migrate("batch", kMigrations); }

bool EntityStore::add(const std::string& account, const std::string& scope, const nlohmann::json& body) {
    bool added = false;
    const std::string id = text::lower(body.value("id", ""));
    db_.transaction([&](db::Database& db) {
        auto exists = db.prepare("SELECT 1 FROM batch_entities WHERE account = ? AND scope = ? AND lower_id = ?");
        exists.bind(1, account).bind(2, scope).bind(3, id);
        if (exists.step()) return;
        exists.reset();
        std::int64_t ticks = time::to_ticks(time::now());
        auto insert = db.prepare(
            "INSERT INTO batch_entities(account, scope, lower_id, body, etag, modified_ticks) VALUES (?, ?, ?, ?, ?, ?)");
        insert.bind(1, account).bind(2, scope).bind(3, id).bind(4, body.dump()).bind(5, make_etag(ticks)).bind(6, ticks);
        insert.run();
        added = true;
    });
    return added;
}

std::optional<StoredEntity> EntityStore::get(const std::string& account, const std::string& scope, const std::string& id) const {
    std::optional<StoredEntity> found;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            " FROM batch_entities WHERE account = ? AND scope = ? AND lower_id = ?");
        s.bind(1, account).bind(2, scope).bind(3, text::lower(id));
        if (s.step()) found = read_row(s);
    });
    return found;
}

std::optional<StoredEntity> EntityStore::update(const std::string& account, const std::string& scope, const std::string& id,
                                                const std::function<bool(nlohmann::json&)>& change) {
    std::optional<StoredEntity> result;
    db_.transaction([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            " FROM batch_entities WHERE account = ? AND scope = ? AND lower_id = ?");
        s.bind(1, account).bind(2, scope).bind(3, text::lower(id));
        if (!s.step()) return;
        StoredEntity entity = read_row(s);
        s.reset();
        if (change(entity.body)) {
            entity.modified_ticks = std::max(time::to_ticks(time::now()), entity.modified_ticks + 1);
            entity.etag = make_etag(entity.modified_ticks);
            auto write = db.prepare(
                "UPDATE batch_entities SET body = ?, etag = ?, modified_ticks = ? WHERE account = ? AND scope = ? AND lower_id = ?");
            write.bind(1, entity.body.dump()).bind(2, entity.etag).bind(3, entity.modified_ticks);
            write.bind(4, account).bind(5, scope).bind(6, text::lower(id));
            write.run();
        }
        result = std::move(entity);
    });
    return result;
}

bool EntityStore::remove(const std::string& account, const std::string& scope, const std::string& id) {
    bool removed = false;
    db_.transaction([&](db::Database& db) {
        auto exists = db.prepare("SELECT 1 FROM batch_entities WHERE account = ? AND scope = ? AND lower_id = ?");
        exists.bind(1, account).bind(2, scope).bind(3, text::lower(id));
        if (!exists.step()) return;
        exists.reset();
        auto s = db.prepare("DELETE FROM batch_entities WHERE account = ? AND scope = ? AND lower_id = ?");
        s.bind(1, account).bind(2, scope).bind(3, text::lower(id));
        s.run();
        removed = true;
    });
    return removed;
}

void EntityStore::remove_scope(const std::string& account, const std::string& scope) {
    db_.transaction([&](db::Database& db) {
        auto s = db.prepare("DELETE FROM batch_entities WHERE account = ? AND scope = ?");
        s.bind(1, account).bind(2, scope);
        s.run();
    });
}

std::vector<StoredEntity> EntityStore::list(const std::string& account, const std::string& scope, std::int64_t after_seq,
                                            int limit, std::optional<std::int64_t>& next_after) const {
    std::vector<StoredEntity> out;
    std::vector<std::int64_t> seqs;
    next_after.reset();
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            ", seq FROM batch_entities WHERE account = ? AND scope = ? AND seq > ? ORDER BY seq LIMIT ?");
        s.bind(1, account).bind(2, scope).bind(3, after_seq).bind(4, static_cast<std::int64_t>(limit) + 1);
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

std::vector<StoredEntity> EntityStore::all(const std::string& scope) const {
    std::vector<StoredEntity> out;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns + " FROM batch_entities WHERE scope = ? ORDER BY seq");
        s.bind(1, scope);
        while (s.step()) out.push_back(read_row(s));
    });
    return out;
}

}  // namespace bai::batch
