#include "fake_storage/file/file_permissions.h"

#include <cctype>
#include <cstdint>
#include <vector>

namespace bai::storage {
namespace {

// The keys every recording shows for an inherited permission, and what they stand for here: the
// service's own descriptors are not recorded, so these are Windows' usual inherited ones.
constexpr std::string_view kFileKey = "5724850820508509333*16704459309046467611";
constexpr std::string_view kDirectoryKey = "10306785916763839378*16704459309046467611";
constexpr std::string_view kFilePermission =
    "O:SYG:SYD:(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;ID;0x1301bf;;;AU)(A;ID;0x1200a9;;;BU)";
constexpr std::string_view kDirectoryPermission =
    "O:SYG:SYD:(A;OICIID;FA;;;BA)(A;OICIID;FA;;;SY)(A;OICIID;0x1301bf;;;AU)(A;OICIID;0x1200a9;;;BU)";

bool upper(char c) { return c >= 'A' && c <= 'Z'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// S-1-5-21-... (a revision, an authority and sub-authorities, all decimal) or a two-letter alias.
bool valid_sid(std::string_view s) {
    if (s.size() == 2) return upper(s[0]) && upper(s[1]);
    if (s.size() < 4 || s.substr(0, 2) != "S-") return false;
    size_t parts = 0;
    size_t at = 2;
    while (at <= s.size()) {
        size_t dash = s.find('-', at);
        std::string_view part = s.substr(at, dash == std::string_view::npos ? std::string_view::npos : dash - at);
        if (part.empty() || part.size() > 20) return false;
        for (char c : part) {
            if (!digit(c)) return false;
        }
        ++parts;
        if (dash == std::string_view::npos) break;
        at = dash + 1;
    }
    return parts >= 2;
}

bool valid_guid(std::string_view g) {
    if (g.empty()) return true;
    if (g.size() != 36) return false;
    for (size_t i = 0; i < g.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? g[i] != '-' : !hex(g[i])) return false;
    }
    return true;
}

// Two-letter codes one after another ("OICI", "FA"), or nothing.
bool letter_pairs(std::string_view s) {
    if (s.size() % 2 != 0) return false;
    for (char c : s) {
        if (!upper(c)) return false;
    }
    return true;
}

bool valid_rights(std::string_view r) {
    if (r.size() > 2 && r[0] == '0' && (r[1] == 'x' || r[1] == 'X')) {
        if (r.size() > 10) return false;
        for (char c : r.substr(2)) {
            if (!hex(c)) return false;
        }
        return true;
    }
    if (!r.empty() && digit(r[0])) {
        if (r.size() > 10) return false;
        for (char c : r) {
            if (!digit(c)) return false;
        }
        return true;
    }
    return !r.empty() && letter_pairs(r);
}

// One entry's text between its parentheses.
bool valid_ace(std::string_view ace) {
    std::vector<std::string_view> fields;
    size_t at = 0;
    while (fields.size() < 6) {
        size_t semi = ace.find(';', at);
        if (fields.size() < 5 && semi == std::string_view::npos) return false;
        if (fields.size() == 5) {
            fields.push_back(ace.substr(at, semi == std::string_view::npos ? std::string_view::npos : semi - at));
            break;
        }
        fields.push_back(ace.substr(at, semi - at));
        at = semi + 1;
    }
    const std::string_view type = fields[0];
    if (type.empty() || type.size() > 2 || !upper(type[0]) || (type.size() == 2 && !upper(type[1]))) return false;
    return letter_pairs(fields[1]) && valid_rights(fields[2]) && valid_guid(fields[3]) && valid_guid(fields[4]) &&
           valid_sid(fields[5]);
}

// An ACL: flags (P, AI, AR, NO_ACCESS_CONTROL, ...: capitals and '_'), then entries.
bool valid_acl(std::string_view acl) {
    size_t at = 0;
    while (at < acl.size() && (upper(acl[at]) || acl[at] == '_')) ++at;
    while (at < acl.size()) {
        if (acl[at] != '(') return false;
        // An entry ends at its closing parenthesis (a conditional entry nests more of them).
        int depth = 0;
        size_t end = at;
        for (; end < acl.size(); ++end) {
            if (acl[end] == '(') ++depth;
            if (acl[end] == ')' && --depth == 0) break;
        }
        if (end == acl.size()) return false;
        std::string_view ace = acl.substr(at + 1, end - at - 1);
        // Conditional and resource entries carry more fields: the first six are checked.
        size_t nested = ace.find('(');
        if (!valid_ace(nested == std::string_view::npos ? ace : ace.substr(0, ace.rfind(';', nested)))) return false;
        at = end + 1;
    }
    return true;
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t basis) {
    std::uint64_t h = basis;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

bool is_valid_sddl(std::string_view sddl) {
    if (sddl.size() < 3) return false;
    bool seen[4] = {};
    size_t at = 0;
    while (at < sddl.size()) {
        const char which = sddl[at];
        const size_t kind = std::string_view("OGDS").find(which);
        if (kind == std::string_view::npos || at + 1 >= sddl.size() || sddl[at + 1] != ':' || seen[kind]) return false;
        seen[kind] = true;
        // A component runs to the next "X:" that starts one (a SID's "S-" is not one).
        size_t end = at + 2;
        int depth = 0;
        for (; end < sddl.size(); ++end) {
            const char c = sddl[end];
            if (c == '(') ++depth;
            if (c == ')') --depth;
            if (depth == 0 && end + 1 < sddl.size() && sddl[end + 1] == ':' &&
                std::string_view("OGDS").find(c) != std::string_view::npos) {
                break;
            }
        }
        std::string_view value = sddl.substr(at + 2, end - at - 2);
        const bool ok = (which == 'O' || which == 'G') ? valid_sid(value) : valid_acl(value);
        if (!ok) return false;
        at = end;
    }
    return true;
}

std::string permission_key_for(std::string_view sddl) {
    return std::to_string(fnv1a(sddl, 14695981039346656037ull)) + "*" +
           std::to_string(fnv1a(sddl, 1469598103934665603ull ^ 0x5bd1e995u));
}

bool is_permission_key(std::string_view key) {
    size_t star = key.find('*');
    if (star == std::string_view::npos || star == 0 || star + 1 == key.size()) return false;
    for (size_t i = 0; i < key.size(); ++i) {
        if (i != star && !digit(key[i])) return false;
    }
    return star <= 20 && key.size() - star - 1 <= 20;
}

std::string permission_key_of(const ShareEntry& e) {
    if (!e.permission_key.empty()) return e.permission_key;
    return std::string(e.is_dir ? kDirectoryKey : kFileKey);
}

std::optional<std::string> default_permission(std::string_view key) {
    if (key == kFileKey) return std::string(kFilePermission);
    if (key == kDirectoryKey) return std::string(kDirectoryPermission);
    return std::nullopt;
}

}  // namespace bai::storage
