// The ARM resources (resource groups, storage accounts, workspaces, experiments, jobs, clusters,
// file servers) as JSON documents in SQLite, keyed by their lower-cased ARM id: ARM names are
// case-insensitive, and the id returned keeps the case the resource was created with.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/db/database.h"

namespace bai::arm {

struct StoredResource {
    std::string key;   // lower-cased id
    std::string type;  // "workspace", "job", ... (see resource_kinds.h)
    nlohmann::json body;  // as stored: secrets included, internal fields under "_"
    std::string etag;     // "\"0x8D...\""
    std::int64_t modified_ticks = 0;
    std::int64_t seq = 0;  // creation order, for lists and their continuation
};

struct Page {
    std::vector<StoredResource> items;
    std::optional<std::int64_t> next_after;  // the seq to continue after when there is more
};

// What a list of resources shows of each (the portal's), read by SQLite without parsing the
// documents here.
struct ResourceSummary {
    std::string key;
    std::string id;
    std::string name;
    std::string state;    // the text at the list's state path ("" when absent)
    std::string created;  // properties.creationTime
    std::int64_t seq = 0;
};

struct SummaryPage {
    std::vector<ResourceSummary> items;
    std::int64_t total = 0;  // how many match, over every page
};

// A page in the order of the resources' keys (their lower-cased ids).
struct KeyPage {
    std::vector<StoredResource> items;
    std::optional<std::string> next_after;  // the key to continue after when there is more
};

class ResourceStore {
public:
    explicit ResourceStore(db::Database& db);
    static void migrate(db::Database& db);

    std::optional<StoredResource> get(std::string_view id) const;
    // The stored type of `id` (nullopt when absent), without reading its document.
    std::optional<std::string> type_of(std::string_view id) const;
    // Runs f in one transaction: the writes of the store and of the operation tracker made
    // inside it (they share the database) commit together or not at all.
    void atomically(const std::function<void()>& f);
    // Creates the resource; false (nothing written) when one with this id exists.
    bool create(std::string_view id, std::string_view parent_id, std::string_view type, const nlohmann::json& body);
    // Replaces the body of an existing resource; false when it does not exist.
    bool replace(std::string_view id, const nlohmann::json& body);
    // Read-modify-write in one transaction: `change` edits the body and returns false to leave
    // it as it was. Returns the resource as it is afterwards, nullopt when it does not exist.
    std::optional<StoredResource> update(std::string_view id, const std::function<bool(nlohmann::json&)>& change);
    // Removes the resource and everything under its id; returns the removed (children first
    // is not guaranteed).
    std::vector<StoredResource> remove_tree(std::string_view id);

    // Children of `parent_id` of one type, in creation order, after `after_seq`.
    Page children(std::string_view parent_id, std::string_view type, std::int64_t after_seq, int limit) const;
    // Children of `parent_id` of one type in the order of their keys, after the key `after_key`
    // ("" from the first).
    KeyPage children_by_key(std::string_view parent_id, std::string_view type, std::string_view after_key,
                            int limit) const;
    // Every resource of a type whose id is under `scope_id` (a subscription, a group).
    Page under(std::string_view scope_id, std::string_view type, std::int64_t after_seq, int limit) const;
    // Every resource of a type anywhere (start-up: storage accounts into the registry).
    std::vector<StoredResource> all_of_type(std::string_view type) const;
    // The keys of the resources of `type` whose properties.executionState is one of `states`, in
    // creation order; read without parsing any document (a start on 100,000 finished jobs parses
    // none of them).
    std::vector<std::string> keys_in_states(std::string_view type, const std::vector<std::string>& states) const;
    // The resources of `type`, newest first: those whose text at `state_path` (a JSON path such as
    // $.properties.executionState) equals `state` ignoring ASCII case, when `state` is not empty,
    // and whose key holds `key_part` (lower case), when not empty; `top` of them after `skip`.
    SummaryPage summaries(std::string_view type, std::string_view state_path, std::string_view state,
                          std::string_view key_part, int skip, int top) const;
    // How many resources of `type` have each text at `state_path` ("" for none).
    std::vector<std::pair<std::string, std::int64_t>> count_by_state(std::string_view type,
                                                                     std::string_view state_path) const;
    // How many resources of each type there are.
    std::vector<std::pair<std::string, std::int64_t>> count_by_type() const;

    // Called after each create and each update that changed a document, with its type and body
    // as written (a scenario's trace follows job states through it). Set before any write.
    using Observer = std::function<void(std::string_view type, const nlohmann::json& body)>;
    void observe(Observer observer) { observer_ = std::move(observer); }

private:
    db::Database& db_;
    Observer observer_;
};

std::string resource_key(std::string_view id);

}  // namespace bai::arm
