// FileStore::adopt_disk_changes: the index follows what other writers left in a share's directory.
#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "common/text/ascii.h"
#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/properties.h"

namespace bai::storage {
namespace fs = std::filesystem;
namespace {

struct Indexed {
    std::int64_t id;
    std::string name;
    bool is_dir;
    std::uint64_t size;
    std::int64_t last_modified;
};

// The entries directly under `parent`, by lower-cased name (names are case-insensitive).
std::map<std::string, Indexed> indexed_children(db::Database& db, const std::string& account, const std::string& share,
                                                const std::string& parent) {
    auto q = db.prepare(
        "SELECT id, name, is_dir, size, last_modified FROM share_entries WHERE account = ?1 AND share = ?2 AND parent = ?3");
    q.bind(1, account).bind(2, share).bind(3, parent);
    std::map<std::string, Indexed> out;
    while (q.step()) {
        Indexed e{q.column_int(0), q.column_text(1), q.column_int(2) != 0, static_cast<std::uint64_t>(q.column_int(3)),
                  q.column_int(4)};
        out.emplace(text::lower(e.name), e);
    }
    return out;
}

// The store stamps Last-Modified just before it writes a file, so the file's mtime can be a little
// later than the index's time without anyone else having touched it. A same-size rewrite by
// another writer within this second is missed (a size change never is).
constexpr std::int64_t kStoreWriteSlack = 10'000'000;  // 1 s in 100 ns ticks

std::int64_t mtime_ticks(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 10'000'000 + st.st_mtim.tv_nsec / 100;
}

void insert(db::Database& db, const std::string& account, const std::string& share, const std::string& parent,
            const std::string& name, const struct stat& st) {
    const bool dir = S_ISDIR(st.st_mode);
    const std::int64_t ticks = mtime_ticks(st);
    db.prepare(
          "INSERT INTO share_entries(account, share, path, parent, name, is_dir, size, etag, last_modified,"
          " creation_time, last_write_time, change_time, attributes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?9,"
          " ?9, ?10)")
        .bind(1, account)
        .bind(2, share)
        .bind(3, parent.empty() ? name : parent + "/" + name)
        .bind(4, parent)
        .bind(5, name)
        .bind(6, static_cast<std::int64_t>(dir))
        .bind(7, dir ? std::int64_t{0} : static_cast<std::int64_t>(st.st_size))
        .bind(8, new_etag())
        .bind(9, ticks)
        .bind(10, std::string(dir ? "Directory" : "Archive"))
        .run();
}

void remove_subtree(db::Database& db, const std::string& account, const std::string& share, const std::string& path) {
    db.prepare(
          "DELETE FROM share_entries WHERE account = ?1 AND share = ?2 AND (path = ?3 OR substr(path, 1, length(?3) + 1) = ?3 || '/')")
        .bind(1, account)
        .bind(2, share)
        .bind(3, path)
        .run();
}

class Adopter {
public:
    Adopter(db::Database& db, std::string account, std::string share, fs::path root)
        : db_(db), account_(std::move(account)), share_(std::move(share)), root_(std::move(root)) {}

    // Indexes the directories on the way to `parts` (they must exist on disk); returns false
    // when one does not.
    bool ancestors(const std::vector<std::string>& parts, size_t count, std::string& stored) {
        for (size_t i = 0; i < count; ++i) {
            auto children = indexed_children(db_, account_, share_, stored);
            auto it = children.find(text::lower(parts[i]));
            std::string next = stored.empty() ? parts[i] : stored + "/" + parts[i];
            struct stat st {};
            if (it != children.end()) {
                if (!it->second.is_dir) return false;
                next = stored.empty() ? it->second.name : stored + "/" + it->second.name;
            } else {
                if (::lstat((root_ / next).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
                insert(db_, account_, share_, stored, parts[i], st);
                ++changed_;
            }
            stored = next;
        }
        return true;
    }

    void walk(const std::string& dir) {
        auto indexed = indexed_children(db_, account_, share_, dir);
        std::error_code ec;
        for (fs::directory_iterator it(root_ / dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            struct stat st {};
            if (::lstat(it->path().c_str(), &st) != 0) continue;
            if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) continue;  // links, fifos: not share content
            const std::string path = dir.empty() ? name : dir + "/" + name;
            auto found = indexed.find(text::lower(name));
            if (found == indexed.end()) {
                insert(db_, account_, share_, dir, name, st);
                ++changed_;
            } else {
                Indexed e = found->second;
                indexed.erase(found);
                if (e.name != name) continue;  // a second name differing only in case: not representable
                if (e.is_dir != S_ISDIR(st.st_mode)) {
                    remove_subtree(db_, account_, share_, path);
                    insert(db_, account_, share_, dir, name, st);
                    ++changed_;
                } else if (!e.is_dir && (e.size != static_cast<std::uint64_t>(st.st_size) ||
                                         mtime_ticks(st) > e.last_modified + kStoreWriteSlack)) {
                    db_.prepare(
                          "UPDATE share_entries SET size = ?2, etag = ?3, last_modified = ?4, last_write_time = ?4,"
                          " change_time = ?4 WHERE id = ?1")
                        .bind(1, e.id)
                        .bind(2, static_cast<std::int64_t>(st.st_size))
                        .bind(3, new_etag())
                        .bind(4, std::max(mtime_ticks(st), e.last_modified))
                        .run();
                    ++changed_;
                }
            }
            if (S_ISDIR(st.st_mode)) walk(path);
        }
        if (ec) return;  // unreadable: leave its entries as they are
        for (const auto& [lower, gone] : indexed) {
            remove_subtree(db_, account_, share_, dir.empty() ? gone.name : dir + "/" + gone.name);
            ++changed_;
        }
    }

    size_t changed() const { return changed_; }

private:
    db::Database& db_;
    std::string account_, share_;
    fs::path root_;
    size_t changed_ = 0;
};

}  // namespace

size_t FileStore::adopt_disk_changes(const std::string& account, const std::string& share, const std::string& path) {
    std::vector<std::string> parts = split_share_path(path);
    size_t changed = 0;
    db_.transaction([&](db::Database& db) {
        get_share(account, share);  // 404 ShareNotFound
        Adopter adopter(db, account, share, share_root(account, share));
        std::string stored;
        if (!adopter.ancestors(parts, parts.size(), stored)) return;
        adopter.walk(stored);
        changed = adopter.changed();
    });
    return changed;
}

}  // namespace bai::storage
