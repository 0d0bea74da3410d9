#include "fake_storage/engine/service_settings.h"

#include "common/text/ascii.h"

namespace bai::storage {
namespace {

std::vector<std::string> comma_list(const nlohmann::json& rule, const char* key) {
    return text::split_list(rule.value(key, std::string()));
}

}  // namespace

nlohmann::json ServiceSettings::get(const std::string& account, const std::string& service,
                                    const nlohmann::json& defaults) {
    std::lock_guard<std::mutex> lock(mutex_);
    return get_locked(account, service, defaults);
}

bool ServiceSettings::flag(const std::string& account, const std::string& service, const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    const nlohmann::json& stored = cached_locked(account, service);
    if (!stored.is_object()) return false;
    auto it = stored.find(key);
    return it != stored.end() && it->is_boolean() && it->get<bool>();
}

nlohmann::json ServiceSettings::get_locked(const std::string& account, const std::string& service,
                                           const nlohmann::json& defaults) {
    const nlohmann::json& stored = cached_locked(account, service);
    return stored.is_null() ? defaults : stored;
}

const nlohmann::json& ServiceSettings::cached_locked(const std::string& account, const std::string& service) {
    auto key = std::make_pair(account, service);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
        nlohmann::json stored;  // null: never set
        db_.read([&](db::Database& db) {
            auto q = db.prepare("SELECT properties FROM service_settings WHERE account = ?1 AND service = ?2");
            q.bind(1, account).bind(2, service);
            if (q.step()) stored = nlohmann::json::parse(q.column_text(0), nullptr, false);
        });
        if (stored.is_discarded()) stored = nullptr;
        it = cache_.emplace(key, std::move(stored)).first;
    }
    return it->second;
}

void ServiceSettings::update(const std::string& account, const std::string& service, const nlohmann::json& defaults,
                             const std::function<nlohmann::json(nlohmann::json)>& change) {
    std::lock_guard<std::mutex> lock(mutex_);
    nlohmann::json properties = change(get_locked(account, service, defaults));
    db_.transaction([&](db::Database& db) {
        db.prepare("INSERT INTO service_settings (account, service, properties) VALUES (?1, ?2, ?3) "
                   "ON CONFLICT (account, service) DO UPDATE SET properties = excluded.properties")
            .bind(1, account)
            .bind(2, service)
            .bind(3, properties.dump())
            .run();
    });
    cache_[{account, service}] = std::move(properties);
}

void ServiceSettings::forget(const std::string& account) {
    std::lock_guard<std::mutex> lock(mutex_);
    db_.transaction([&](db::Database& db) {
        db.prepare("DELETE FROM service_settings WHERE account = ?1").bind(1, account).run();
    });
    std::erase_if(cache_, [&](const auto& entry) { return entry.first.first == account; });
}

std::vector<CorsRule> ServiceSettings::cors_rules(const std::string& account, const std::string& service) {
    return cors_rules_of(get(account, service, nlohmann::json::object()));
}

std::vector<CorsRule> cors_rules_of(const nlohmann::json& properties) {
    std::vector<CorsRule> rules;
    if (!properties.is_object() || !properties.contains("Cors") || !properties["Cors"].is_array()) return rules;
    for (const nlohmann::json& r : properties["Cors"]) {
        CorsRule rule;
        rule.allowed_origins = comma_list(r, "AllowedOrigins");
        rule.allowed_methods = comma_list(r, "AllowedMethods");
        rule.allowed_headers = comma_list(r, "AllowedHeaders");
        rule.exposed_headers = comma_list(r, "ExposedHeaders");
        rule.max_age_seconds = r.value("MaxAgeInSeconds", 0LL);
        rules.push_back(std::move(rule));
    }
    return rules;
}

}  // namespace bai::storage
