#include "emulator/batch/entity_store.h"

#include <limits>

#include "common/text/ascii.h"

namespace bai::batch {
namespace {

std::string scope_id(const std::string& account, const std::string& scope) { return "batch/" + account + "/" + scope; }

std::string entity_id(const std::string& account, const std::string& scope, const std::string& id) {
    return scope_id(account, scope) + "/" + id;
}

// The stored type of a scope's entities.
std::string type_of(const std::string& scope) {
    if (scope == kPools) return "batch-pool";
    if (scope == kJobs) return "batch-job";
    if (scope == kCertificates) return "batch-certificate";
    if (scope == kJobSchedules) return "batch-jobschedule";
    if (scope == kUsage) return "batch-usage";
    return "batch-task";
}

// The service's ETag has no quotes; the ARM store's has.
StoredEntity entity_of(const std::string& account, arm::StoredResource r) {
    std::string etag = r.etag;
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
    return {account, std::move(r.body), etag, r.modified_ticks};
}

// "batch/ACCOUNT/..." -> ACCOUNT
std::string account_of(const arm::StoredResource& r) {
    const size_t start = r.key.find('/') + 1;
    return r.key.substr(start, r.key.find('/', start) - start);
}

// Documents read (and parsed) at a time where all of a scope's are wanted.
constexpr int kPageOfDocuments = 1000;

bool is_tasks(const std::string& scope) { return type_of(scope) == "batch-task"; }

std::string tally_key(const std::string& account, const std::string& scope) { return account + "/" + scope; }

}  // namespace

std::string tasks_of(const std::string& job_id) { return "jobs/" + text::lower(job_id) + "/tasks"; }

bool EntityStore::add(const std::string& account, const std::string& scope, const nlohmann::json& body) {
    const std::string id = body.value("id", "");
    if (scope == kJobs) {
        std::lock_guard guard(tally_mutex_);
        if (!resources_.create(entity_id(account, scope, id), scope_id(account, scope), type_of(scope), body)) return false;
        tallies_[tally_key(account, tasks_of(id))] = TaskTally{};  // a new job has no tasks
        return true;
    }
    if (!is_tasks(scope)) return resources_.create(entity_id(account, scope, id), scope_id(account, scope), type_of(scope), body);
    std::lock_guard guard(tally_mutex_);
    if (!resources_.create(entity_id(account, scope, id), scope_id(account, scope), type_of(scope), body)) return false;
    if (auto tally = tallies_.find(tally_key(account, scope)); tally != tallies_.end()) tally->second.count(body);
    return true;
}

std::optional<StoredEntity> EntityStore::get(const std::string& account, const std::string& scope, const std::string& id) const {
    std::optional<arm::StoredResource> r = resources_.get(entity_id(account, scope, id));
    if (!r || r->type != type_of(scope)) return std::nullopt;
    return entity_of(account, std::move(*r));
}

std::optional<StoredEntity> EntityStore::update(const std::string& account, const std::string& scope, const std::string& id,
                                                const std::function<bool(nlohmann::json&)>& change) {
    if (!is_tasks(scope)) {
        std::optional<arm::StoredResource> r = resources_.update(entity_id(account, scope, id), change);
        if (!r) return std::nullopt;
        return entity_of(account, std::move(*r));
    }
    std::lock_guard guard(tally_mutex_);
    TaskTally delta;  // what the write changes, when it writes
    std::optional<arm::StoredResource> r = resources_.update(entity_id(account, scope, id), [&](nlohmann::json& doc) {
        TaskTally before;
        before.count(doc, -1);
        if (!change(doc)) return false;
        delta = before;
        delta.count(doc);
        return true;
    });
    if (!r) return std::nullopt;
    if (auto tally = tallies_.find(tally_key(account, scope)); tally != tallies_.end()) tally->second.add(delta);
    return entity_of(account, std::move(*r));
}

bool EntityStore::remove(const std::string& account, const std::string& scope, const std::string& id) {
    const std::string full = entity_id(account, scope, id);
    if (scope != kJobs && !is_tasks(scope)) {
        if (!resources_.type_of(full)) return false;
        resources_.remove_tree(full);
        return true;
    }
    std::lock_guard guard(tally_mutex_);
    if (!resources_.type_of(full)) return false;
    std::vector<arm::StoredResource> removed = resources_.remove_tree(full);  // a job's tasks are in its subtree: they go with it
    if (scope == kJobs) {
        tallies_.erase(tally_key(account, tasks_of(id)));
    } else if (auto tally = tallies_.find(tally_key(account, scope)); tally != tallies_.end()) {
        for (const arm::StoredResource& task : removed) tally->second.count(task.body, -1);
    }
    return true;
}

void EntityStore::remove_scope(const std::string& account, const std::string& scope) {
    std::lock_guard guard(tally_mutex_);
    resources_.remove_tree(scope_id(account, scope));
    if (is_tasks(scope)) tallies_.erase(tally_key(account, scope));
}

TaskTally EntityStore::task_tally(const std::string& account, const std::string& job_id) {
    const std::string scope = tasks_of(job_id);
    std::lock_guard guard(tally_mutex_);
    auto [tally, counting] = tallies_.try_emplace(tally_key(account, scope));
    if (!counting) return tally->second;
    TaskTally& counted = tally->second;
    for_each_in_scope(account, scope, [&counted](StoredEntity& task) { counted.count(task.body); });
    return counted;
}

std::vector<StoredEntity> EntityStore::list(const std::string& account, const std::string& scope, const std::string& after_id,
                                            int limit, std::optional<std::string>& next_after) const {
    const std::string after_key = after_id.empty() ? "" : arm::resource_key(entity_id(account, scope, after_id));
    arm::KeyPage page = resources_.children_by_key(scope_id(account, scope), type_of(scope), after_key, limit);
    next_after.reset();
    if (page.next_after) next_after = page.next_after->substr(page.next_after->rfind('/') + 1);
    std::vector<StoredEntity> out;
    for (arm::StoredResource& r : page.items) out.push_back(entity_of(account, std::move(r)));
    return out;
}

std::vector<StoredEntity> EntityStore::in_scope(const std::string& account, const std::string& scope) const {
    arm::Page page = resources_.children(scope_id(account, scope), type_of(scope), 0, std::numeric_limits<int>::max());
    std::vector<StoredEntity> out;
    for (arm::StoredResource& r : page.items) out.push_back(entity_of(account, std::move(r)));
    return out;
}

void EntityStore::for_each_in_scope(const std::string& account, const std::string& scope,
                                    const std::function<void(StoredEntity&)>& f) const {
    for (std::optional<std::int64_t> after = 0; after;) {
        arm::Page page = resources_.children(scope_id(account, scope), type_of(scope), *after, kPageOfDocuments);
        for (arm::StoredResource& r : page.items) {
            StoredEntity entity = entity_of(account, std::move(r));
            f(entity);
        }
        after = page.next_after;
    }
}

std::vector<StoredEntity> EntityStore::all(const std::string& scope) const {
    std::vector<StoredEntity> out;
    for (arm::StoredResource& r : resources_.all_of_type(type_of(scope))) {
        std::string account = account_of(r);
        out.push_back(entity_of(account, std::move(r)));
    }
    return out;
}

}  // namespace bai::batch
