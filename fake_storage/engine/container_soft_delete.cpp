// Container soft delete: with the account's containerDeleteRetentionPolicy on, Delete Container
// keeps the container and its blobs under a deleted container's key, "NAME~VERSION" (no
// container name has a '~'; VERSION as for deleted shares, share_snapshot_names.h): the rows of
// the container, its blobs and staged blocks are renamed in one transaction, so nothing that
// reads a container by name (REST, mounts, jobs) sees it, and Restore Container renames them
// back. Blob files are per account, not per container: nothing moves on disk.
#include <algorithm>
#include <tuple>

#include "fake_storage/engine/blob_rows.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/share_snapshot_names.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

nlohmann::json container_policy(ServiceSettings& settings, const std::string& account) {
    const nlohmann::json properties = settings.get(account, "blob", nlohmann::json::object());
    const nlohmann::json policy = properties.value("ContainerDeleteRetentionPolicy", nlohmann::json::object());
    return policy.is_object() ? policy : nlohmann::json::object();
}

// The keys of the deleted containers of `name`: "NAME~..." (container names are lower-case
// letters, digits and '-', all below '~').
std::vector<std::string> deleted_keys(db::Database& db, const std::string& account, const std::string& name) {
    std::vector<std::string> keys;
    auto q = db.prepare("SELECT name FROM containers WHERE account = ?1 AND name > ?2 AND name < ?3");
    q.bind(1, account).bind(2, name + "~").bind(3, name + "~\x7f");
    while (q.step()) keys.push_back(q.column_text(0));
    return keys;
}

void rename_container_rows(db::Database& db, const std::string& account, const std::string& from, const std::string& to) {
    for (const char* sql : {"UPDATE containers SET name = ?3 WHERE account = ?1 AND name = ?2",
                            "UPDATE blobs SET container = ?3 WHERE account = ?1 AND container = ?2",
                            "UPDATE uncommitted_blocks SET container = ?3 WHERE account = ?1 AND container = ?2"}) {
        db.prepare(sql).bind(1, account).bind(2, from).bind(3, to).run();
    }
}

}  // namespace

bool BlobStore::container_soft_delete_on(const std::string& account) {
    return container_policy(settings_, account).value("Enabled", false);
}

int BlobStore::container_retention_days(const std::string& account) {
    const nlohmann::json days = container_policy(settings_, account).value("Days", nlohmann::json(7));
    return days.is_number_integer() ? std::max(1, days.get<int>()) : 7;
}

void BlobStore::keep_container_as_deleted(db::Database& db, const std::string& account, const std::string& name) {
    // The version is the deletion's time, to the tick; the next free tick when a container of the
    // name was deleted in this one.
    time::TimePoint at = clock_now();
    while (find_container(db, account, deleted_share_key(name, deleted_share_version(at)))) at += std::chrono::nanoseconds(100);
    const std::string key = deleted_share_key(name, deleted_share_version(at));
    rename_container_rows(db, account, name, key);
    db.prepare("UPDATE containers SET lease = '' WHERE account = ?1 AND name = ?2").bind(1, account).bind(2, key).run();
}

bool BlobStore::container_being_deleted(db::Database& db, const std::string& account, const std::string& name) {
    const time::TimePoint now = clock_now();
    for (const std::string& key : deleted_keys(db, account, name)) {
        auto at = deleted_share_time(split_deleted_share_key(key).second);
        if (at && now - *at < kContainerBeingDeleted) return true;
    }
    return false;
}

ContainerInfo BlobStore::restore_container(const std::string& account, const std::string& name,
                                           const std::string& deleted_name, const std::string& version,
                                           time::TimePoint kept_since) {
    purge_deleted_containers(account, kept_since);
    const std::string whole_container;
    PublishOnReturn publish(changes_, account, name, whole_container);
    ContainerInfo out;
    write([&](db::Database& db) {
        const std::string key = deleted_share_key(deleted_name, version);
        if (!find_container(db, account, key)) container_not_found();
        if (find_container(db, account, name)) fail(409, "ContainerAlreadyExists", "The specified container already exists.");
        rename_container_rows(db, account, key, name);
        db.prepare("UPDATE containers SET etag = ?3, last_modified = ?4, lease = '' WHERE account = ?1 AND name = ?2")
            .bind(1, account).bind(2, name).bind(3, new_etag()).bind(4, time::to_ticks(time::now())).run();
        out = *find_container(db, account, name);
    });
    return out;
}

void BlobStore::purge_deleted_containers(const std::string& account, time::TimePoint kept_since) {
    std::vector<std::pair<ContentKind, std::string>> garbage;
    write([&](db::Database& db) {
        garbage.clear();
        std::vector<std::string> expired;
        auto q = db.prepare("SELECT name FROM containers WHERE account = ?1 AND instr(name, '~') > 0");
        q.bind(1, account);
        while (q.step()) {
            const std::string key = q.column_text(0);
            auto at = deleted_share_time(split_deleted_share_key(key).second);
            if (!at || *at < kept_since) expired.push_back(key);
        }
        for (const std::string& key : expired) drop_container(db, account, key, garbage);
    });
    remove_contents(files_, account, garbage);
}

// The service's marker, "/ACCOUNT/NAME", names the first container of the next page; a bare
// name (Azurite's) the last one listed (list_containers). The deleted containers of a name come
// before a live one of it, oldest first.
ContainerListPage BlobStore::list_containers_with_deleted(const std::string& account, const ListOptions& o) {
    const std::string own = "/" + account + "/";
    const bool service_marker = o.marker.rfind(own, 0) == 0;
    const std::string from = service_marker ? o.marker.substr(own.size()) : o.marker;
    std::vector<ContainerInfo> all;
    db_.read([&](db::Database& db) {
        auto q = db.prepare(
            "SELECT name, etag, created, last_modified, metadata, public_access, lease, signed_identifiers FROM containers"
            " WHERE account = ?1 AND name >= ?2 AND name < ?3");
        q.bind(1, account).bind(2, o.prefix).bind(3, prefix_end(o.prefix));
        while (q.step()) {
            ContainerInfo c = read_container(q);
            auto [name, version] = split_deleted_share_key(c.name);
            c.name = name;
            c.deleted_version = version;
            if (c.name.rfind(o.prefix, 0) != 0) continue;
            if (!from.empty() && (service_marker ? c.name < from : c.name <= from)) continue;
            all.push_back(std::move(c));
        }
    });
    std::sort(all.begin(), all.end(), [](const ContainerInfo& a, const ContainerInfo& b) {
        return std::make_tuple(a.name, a.deleted_version.empty(), a.deleted_version) <
               std::make_tuple(b.name, b.deleted_version.empty(), b.deleted_version);
    });
    ContainerListPage page;
    for (ContainerInfo& c : all) {
        if (static_cast<int>(page.containers.size()) == o.max_results) {
            page.next_marker = own + c.name;
            break;
        }
        page.containers.push_back(std::move(c));
    }
    return page;
}

}  // namespace bai::storage
