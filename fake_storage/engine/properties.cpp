#include "fake_storage/engine/properties.h"

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <strings.h>

namespace bai::storage {

bool CaseInsensitiveLess::operator()(const std::string& a, const std::string& b) const {
    return ::strcasecmp(a.c_str(), b.c_str()) < 0;
}

std::string metadata_to_json(const Metadata& metadata) {
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& [name, value] : metadata) doc.push_back({name, value});
    return doc.dump();
}

Metadata metadata_from_json(const std::string& json) {
    Metadata out;
    if (json.empty() || json == "[]") return out;
    for (const auto& pair : nlohmann::json::parse(json)) {
        out[pair[0].get<std::string>()] = pair[1].get<std::string>();
    }
    return out;
}

namespace {
constexpr char kSeparator = '\x1f';
}  // namespace

std::string encode_content_settings(const ContentSettings& c) {
    std::string s;
    for (const std::string* field : {&c.content_type, &c.content_encoding, &c.content_language,
                                     &c.content_md5, &c.content_disposition, &c.cache_control}) {
        if (field != &c.content_type) s += kSeparator;
        s += *field;
    }
    return s;
}

ContentSettings decode_content_settings(const std::string& stored) {
    ContentSettings c;
    if (stored.empty()) return c;
    if (stored.front() == '{') {  // rows written before the compact form
        auto doc = nlohmann::json::parse(stored);
        c.content_type = doc.value("type", "");
        c.content_encoding = doc.value("encoding", "");
        c.content_language = doc.value("language", "");
        c.content_md5 = doc.value("md5", "");
        c.content_disposition = doc.value("disposition", "");
        c.cache_control = doc.value("cache", "");
        return c;
    }
    std::string* fields[] = {&c.content_type, &c.content_encoding, &c.content_language,
                             &c.content_md5, &c.content_disposition, &c.cache_control};
    size_t start = 0;
    for (std::string* field : fields) {
        size_t end = stored.find(kSeparator, start);
        *field = stored.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return c;
}

std::string new_etag() {
    // Ticks of 100 ns like the service's etags, bumped so that two are never equal.
    static std::atomic<std::int64_t> last{0};
    std::int64_t candidate = time::to_ticks(time::now()) + 0x8000000000000LL;
    std::int64_t previous = last.load();
    std::int64_t next = 0;
    do {
        next = candidate > previous ? candidate : previous + 1;
    } while (!last.compare_exchange_weak(previous, next));
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "\"0x%llX\"", static_cast<unsigned long long>(next));
    return buffer;
}

bool is_valid_metadata_name(const std::string& name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_';
        if (!ok) return false;
    }
    return true;
}

}  // namespace bai::storage
