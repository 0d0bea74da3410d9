#include "emulator/arm/resource_store.h"

#include <algorithm>

#include <cstdio>

#include "common/time/timestamps.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

constexpr db::Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE arm_resources(
  key TEXT PRIMARY KEY,
  parent_key TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  etag TEXT NOT NULL,
  modified_ticks INTEGER NOT NULL,
  seq INTEGER NOT NULL
);
CREATE INDEX arm_resources_by_parent ON arm_resources(parent_key, type, seq);
CREATE INDEX arm_resources_by_type ON arm_resources(type, seq);
)sql"},
    // The next seq is MAX(seq) + 1: without an index that is a scan of every resource per create.
    {2, "CREATE INDEX arm_resources_by_seq ON arm_resources(seq);"},
    // seq becomes the rowid: the table is ordered by it and the indexes end with it implicitly,
    // two b-trees fewer to write per create (each a 4 KiB WAL frame).
    {3, R"sql(
CREATE TABLE arm_resources_v3(
  seq INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  parent_key TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  etag TEXT NOT NULL,
  modified_ticks INTEGER NOT NULL
);
INSERT INTO arm_resources_v3(seq, key, parent_key, type, body, etag, modified_ticks)
  SELECT seq, key, parent_key, type, body, etag, modified_ticks FROM arm_resources;
DROP TABLE arm_resources;
ALTER TABLE arm_resources_v3 RENAME TO arm_resources;
CREATE INDEX arm_resources_by_parent ON arm_resources(parent_key, type);
CREATE INDEX arm_resources_by_type ON arm_resources(type);
)sql"},
    // Lists in key order (the Batch service lists pools, jobs and tasks by id) read a range of
    // this index instead of sorting every child.
    {4, "CREATE INDEX arm_resources_by_parent_key ON arm_resources(parent_key, type, key);"},
};

constexpr const char* kColumns = "key, type, body, etag, modified_ticks, seq";

StoredResource read_row(db::Statement& s) {
    StoredResource r;
    r.key = s.column_text(0);
    r.type = s.column_text(1);
    r.body = nlohmann::json::parse(s.column_text(2));
    r.etag = s.column_text(3);
    r.modified_ticks = s.column_int(4);
    r.seq = s.column_int(5);
    return r;
}

// ETags look like the cloud's: a quoted 0x-prefixed hex number that changes on every write.
std::string make_etag(std::int64_t ticks) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "\"0x%llX\"", static_cast<unsigned long long>(ticks) + 0x8D000000000000ULL);
    return buffer;
}

// Keys under `key`: "key/" up to (not including) "key0" ('0' follows '/').
std::pair<std::string, std::string> subtree_range(const std::string& key) {
    return {key + "/", key + "0"};
}

// The rows of a query asked for `limit` + 1: `limit` of them, and where to go on (the last one's
// seq, or key) when there was one more.
template <typename P, typename Cursor>
P read_page_of(db::Statement& s, int limit, Cursor cursor) {
    P page;
    while (s.step()) {
        if (static_cast<int>(page.items.size()) == limit) {
            page.next_after = cursor(page.items.back());
            break;
        }
        page.items.push_back(read_row(s));
    }
    return page;
}

Page read_page(db::Statement& s, int limit) {
    return read_page_of<Page>(s, limit, [](const StoredResource& r) { return r.seq; });
}

}  // namespace

std::string resource_key(std::string_view id) {
    std::string key = lower(id);
    while (key.size() > 1 && key.back() == '/') key.pop_back();
    return key;
}

ResourceStore::ResourceStore(db::Database& db) : db_(db) {}

void ResourceStore::migrate(db::Database& db) { db.migrate("arm", kMigrations); }

std::optional<StoredResource> ResourceStore::get(std::string_view id) const {
    std::optional<StoredResource> found;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns + " FROM arm_resources WHERE key = ?");
        s.bind(1, resource_key(id));
        if (s.step()) found = read_row(s);
    });
    return found;
}

std::optional<std::string> ResourceStore::type_of(std::string_view id) const {
    std::optional<std::string> type;
    db_.read([&](db::Database& db) {
        auto s = db.prepare("SELECT type FROM arm_resources WHERE key = ?");
        s.bind(1, resource_key(id));
        if (s.step()) type = s.column_text(0);
    });
    return type;
}

void ResourceStore::atomically(const std::function<void()>& f) {
    db_.transaction([&](db::Database&) { f(); });
}

bool ResourceStore::create(std::string_view id, std::string_view parent_id, std::string_view type,
                           const nlohmann::json& body) {
    bool created = false;
    db_.transaction([&](db::Database& db) {
        const std::string key = resource_key(id);
        auto exists = db.prepare("SELECT 1 FROM arm_resources WHERE key = ?");
        exists.bind(1, key);
        if (exists.step()) return;
        std::int64_t ticks = time::to_ticks(time::now());
        auto insert = db.prepare(
            "INSERT INTO arm_resources(key, parent_key, type, body, etag, modified_ticks) VALUES (?, ?, ?, ?, ?, ?)");
        insert.bind(1, key).bind(2, resource_key(parent_id)).bind(3, type).bind(4, body.dump());
        insert.bind(5, make_etag(ticks)).bind(6, ticks);
        insert.run();
        created = true;
    });
    if (created && observer_) observer_(type, body);
    return created;
}

bool ResourceStore::replace(std::string_view id, const nlohmann::json& body) {
    return update(id, [&](nlohmann::json& current) {
               current = body;
               return true;
           }).has_value();
}

std::optional<StoredResource> ResourceStore::update(std::string_view id,
                                                    const std::function<bool(nlohmann::json&)>& change) {
    std::optional<StoredResource> result;
    bool changed = false;
    db_.transaction([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns + " FROM arm_resources WHERE key = ?");
        s.bind(1, resource_key(id));
        if (!s.step()) return;
        StoredResource r = read_row(s);
        s.reset();
        changed = change(r.body);
        if (changed) {
            r.modified_ticks = std::max(time::to_ticks(time::now()), r.modified_ticks + 1);
            r.etag = make_etag(r.modified_ticks);
            auto write = db.prepare("UPDATE arm_resources SET body = ?, etag = ?, modified_ticks = ? WHERE key = ?");
            write.bind(1, r.body.dump()).bind(2, r.etag).bind(3, r.modified_ticks).bind(4, r.key);
            write.run();
        }
        result = std::move(r);
    });
    if (changed && result && observer_) observer_(result->type, result->body);
    return result;
}

std::vector<StoredResource> ResourceStore::remove_tree(std::string_view id) {
    std::vector<StoredResource> removed;
    db_.transaction([&](db::Database& db) {
        const std::string key = resource_key(id);
        auto [from, to] = subtree_range(key);
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            " FROM arm_resources WHERE key = ? OR (key >= ? AND key < ?)");
        s.bind(1, key).bind(2, from).bind(3, to);
        while (s.step()) removed.push_back(read_row(s));
        s.reset();
        auto d = db.prepare("DELETE FROM arm_resources WHERE key = ? OR (key >= ? AND key < ?)");
        d.bind(1, key).bind(2, from).bind(3, to);
        d.run();
    });
    return removed;
}

Page ResourceStore::children(std::string_view parent_id, std::string_view type, std::int64_t after_seq,
                             int limit) const {
    Page page;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            " FROM arm_resources WHERE parent_key = ? AND type = ? AND seq > ? ORDER BY seq LIMIT ?");
        s.bind(1, resource_key(parent_id)).bind(2, type).bind(3, after_seq).bind(4, std::int64_t{limit} + 1);
        page = read_page(s, limit);
    });
    return page;
}

KeyPage ResourceStore::children_by_key(std::string_view parent_id, std::string_view type, std::string_view after_key,
                                      int limit) const {
    KeyPage page;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            " FROM arm_resources WHERE parent_key = ? AND type = ? AND key > ? ORDER BY key LIMIT ?");
        s.bind(1, resource_key(parent_id)).bind(2, type).bind(3, after_key).bind(4, std::int64_t{limit} + 1);
        page = read_page_of<KeyPage>(s, limit, [](const StoredResource& r) { return r.key; });
    });
    return page;
}

Page ResourceStore::under(std::string_view scope_id, std::string_view type, std::int64_t after_seq,
                          int limit) const {
    Page page;
    db_.read([&](db::Database& db) {
        auto [from, to] = subtree_range(resource_key(scope_id));
        auto s = db.prepare(std::string("SELECT ") + kColumns +
                            " FROM arm_resources WHERE type = ? AND key >= ? AND key < ? AND seq > ? "
                            "ORDER BY seq LIMIT ?");
        s.bind(1, type).bind(2, from).bind(3, to).bind(4, after_seq).bind(5, std::int64_t{limit} + 1);
        page = read_page(s, limit);
    });
    return page;
}

std::vector<StoredResource> ResourceStore::all_of_type(std::string_view type) const {
    std::vector<StoredResource> all;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(std::string("SELECT ") + kColumns + " FROM arm_resources WHERE type = ? ORDER BY seq");
        s.bind(1, type);
        while (s.step()) all.push_back(read_row(s));
    });
    return all;
}

std::vector<std::string> ResourceStore::keys_in_states(std::string_view type,
                                                      const std::vector<std::string>& states) const {
    std::vector<std::string> keys;
    db_.read([&](db::Database& db) {
        auto s = db.prepare(
            "SELECT key, json_extract(body, '$.properties.executionState') FROM arm_resources WHERE type = ? ORDER BY seq");
        s.bind(1, type);
        while (s.step()) {
            if (s.is_null(1)) continue;
            if (std::find(states.begin(), states.end(), s.column_text(1)) != states.end()) keys.push_back(s.column_text(0));
        }
    });
    return keys;
}

SummaryPage ResourceStore::summaries(std::string_view type, std::string_view state_path, std::string_view state,
                                     std::string_view key_part, int skip, int top) const {
    SummaryPage page;
    const std::string where = " FROM arm_resources WHERE type = ?1 AND (?3 = '' OR lower(json_extract(body, ?2)) = lower(?3))"
                              " AND (?4 = '' OR instr(key, ?4) > 0)";
    db_.read([&](db::Database& db) {
        auto count = db.prepare("SELECT COUNT(*)" + where);
        count.bind(1, type).bind(2, state_path).bind(3, state).bind(4, key_part);
        if (count.step()) page.total = count.column_int(0);
        auto s = db.prepare("SELECT key, json_extract(body, '$.id'), json_extract(body, '$.name'), json_extract(body, ?2),"
                            " json_extract(body, '$.properties.creationTime'), seq" +
                            where + " ORDER BY seq DESC LIMIT ?5 OFFSET ?6");
        s.bind(1, type).bind(2, state_path).bind(3, state).bind(4, key_part).bind(5, std::int64_t{top}).bind(6, std::int64_t{skip});
        auto text = [&s](int column) { return s.is_null(column) ? std::string() : s.column_text(column); };
        while (s.step()) page.items.push_back({text(0), text(1), text(2), text(3), text(4), s.column_int(5)});
    });
    return page;
}

std::vector<std::pair<std::string, std::int64_t>> ResourceStore::count_by_state(std::string_view type,
                                                                                std::string_view state_path) const {
    std::vector<std::pair<std::string, std::int64_t>> out;
    db_.read([&](db::Database& db) {
        auto s = db.prepare("SELECT json_extract(body, ?2), COUNT(*) FROM arm_resources WHERE type = ?1 GROUP BY 1");
        s.bind(1, type).bind(2, state_path);
        while (s.step()) out.emplace_back(s.is_null(0) ? std::string() : s.column_text(0), s.column_int(1));
    });
    return out;
}

std::vector<std::pair<std::string, std::int64_t>> ResourceStore::count_by_type() const {
    std::vector<std::pair<std::string, std::int64_t>> out;
    db_.read([&](db::Database& db) {
        auto s = db.prepare("SELECT type, COUNT(*) FROM arm_resources GROUP BY type");
        while (s.step()) out.emplace_back(s.column_text(0), s.column_int(1));
    });
    return out;
}

}  // namespace bai::arm
