// The settings an account keeps per service (Set Blob / File Service Properties): logging,
// metrics, CORS rules, the default service version, soft delete, the static website. Kept in
// SQLite as the JSON model that service_properties_xml reads and writes, and cached, since the
// CORS rules are read for every request that carries an Origin.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/db/database.h"

namespace bai::storage {

struct CorsRule {
    std::vector<std::string> allowed_origins;  // "*" alone, or origins (a "*" in one is a wildcard)
    std::vector<std::string> allowed_methods;
    std::vector<std::string> allowed_headers;  // names, or prefixes ending in "*"
    std::vector<std::string> exposed_headers;  // the same
    long long max_age_seconds = 0;
};

class ServiceSettings {
public:
    explicit ServiceSettings(db::Database& db) : db_(db) {}

    // The stored properties of `service` ("blob" or "file") of an account; `defaults` when none
    // were ever set.
    nlohmann::json get(const std::string& account, const std::string& service, const nlohmann::json& defaults);
    // Stores `change(current)`, where current is what get() answers, in one step: two Sets at
    // once each keep what the other set.
    void update(const std::string& account, const std::string& service, const nlohmann::json& defaults,
                const std::function<nlohmann::json(nlohmann::json)>& change);
    // Whether the boolean setting `key` of the stored properties is true (false when never set);
    // read without copying the properties (Put Blob asks for versioning).
    bool flag(const std::string& account, const std::string& service, const std::string& key);
    // An account deleted: its settings go with it (a new account of the name starts afresh).
    void forget(const std::string& account);
    // The CORS rules in force, in order (none when never set).
    std::vector<CorsRule> cors_rules(const std::string& account, const std::string& service);

private:
    // The stored properties (null: none), read into the cache on first use.
    const nlohmann::json& cached_locked(const std::string& account, const std::string& service);
    nlohmann::json get_locked(const std::string& account, const std::string& service, const nlohmann::json& defaults);

    db::Database& db_;
    std::mutex mutex_;
    // (account, service) -> stored properties (null: none stored); filled as read.
    std::map<std::pair<std::string, std::string>, nlohmann::json> cache_;
};

// The rules of a properties document's "Cors" array.
std::vector<CorsRule> cors_rules_of(const nlohmann::json& properties);

}  // namespace bai::storage
