#include "fake_storage/blob/blob_versions.h"

#include <cctype>

#include "fake_storage/http/storage_headers.h"

namespace bai::storage {

std::optional<std::string> parse_version_id(std::string_view v) {
    // YYYY-MM-DDThh:mm:ss.fffffffZ
    static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddddddZ";
    if (v.size() != kShape.size()) return std::nullopt;
    for (size_t i = 0; i < v.size(); ++i) {
        const bool digit = std::isdigit(static_cast<unsigned char>(v[i])) != 0;
        if (kShape[i] == 'd' ? !digit : v[i] != kShape[i]) return std::nullopt;
    }
    auto number = [&](size_t at, size_t n) {
        int x = 0;
        for (size_t i = at; i < at + n; ++i) x = x * 10 + (v[i] - '0');
        return x;
    };
    const int month = number(5, 2), day = number(8, 2), hour = number(11, 2), minute = number(14, 2),
              second = number(17, 2);
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return std::nullopt;
    return std::string(v);
}

bool names_version(const StorageRequest& r) { return r.has_param("versionid"); }

std::string blob_target(const StorageRequest& r) {
    std::string snapshot = r.param("snapshot").value_or("");
    if (!names_version(r)) return snapshot;
    const std::string given = r.param("versionid").value_or("");
    std::optional<std::string> id = parse_version_id(given);
    if (!id || !snapshot.empty()) invalid_query("versionid", given);
    return version_key(*id);
}

void answer_version_id(const StorageRequest& r, httplib::Response& res, const std::string& version_id) {
    if (!version_id.empty() && read_version(r) >= "2019-10-10") res.set_header("x-ms-version-id", version_id);
}

void answer_version_of(const StorageRequest& r, httplib::Response& res, const BlobInfo& b) {
    if (b.version_id.empty() || read_version(r) < "2019-10-10") return;
    res.set_header("x-ms-version-id", b.version_id);
    if (b.is_current_version()) res.set_header("x-ms-is-current-version", "true");
}

}  // namespace bai::storage
