#include "fake_storage/http/storage_request.h"

#include <algorithm>

#include "common/http/proxied_host.h"
#include "common/text/ascii.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

[[noreturn]] void invalid_uri() {
    fail(400, "InvalidUri", "The requested URI does not represent any resource on the server.");
}

}  // namespace

std::optional<std::string> StorageRequest::param(const std::string& lower_name) const {
    auto it = query.find(lower_name);
    if (it == query.end() || it->second.empty()) return std::nullopt;
    return it->second.front();
}

std::string StorageRequest::header(const std::string& name) const {
    return http->get_header_value(name);
}

bool StorageRequest::has_header(const std::string& name) const { return http->has_header(name); }

namespace {

StorageRequest parse(const httplib::Request& http, bool host_style_allowed) {
    StorageRequest r;
    r.http = &http;
    r.method = http.method;
    std::string_view target = http.target.empty() ? std::string_view(http.path) : http.target;
    size_t question = target.find('?');
    std::string_view path = target.substr(0, question);
    std::string_view query = question == std::string_view::npos ? "" : target.substr(question + 1);
    if (path.empty() || path[0] != '/') invalid_uri();
    r.raw_path = std::string(path);
    // ACCOUNT[-secondary].SERVICE.core.windows.net (the front door checked the name): parsed as the
    // path-style path it stands for.
    if (const std::string& host = http::proxied_host();
        host_style_allowed && (host.ends_with(".blob.core.windows.net") || host.ends_with(".file.core.windows.net"))) {
        r.host_style = true;
        r.raw_path = "/" + host.substr(0, host.find('.')) + r.raw_path;
        path = r.raw_path;
    }

    // /account[/container[/name...]]; the name keeps its own slashes (encoded or not).
    std::string_view rest = path.substr(1);
    size_t slash = rest.find('/');
    auto account = percent_decode(rest.substr(0, slash), false);
    if (!account) invalid_uri();
    r.account = *account;
    if (slash != std::string_view::npos) {
        rest = rest.substr(slash + 1);
        slash = rest.find('/');
        auto container = percent_decode(rest.substr(0, slash), false);
        if (!container) invalid_uri();
        r.container = *container;
        if (slash != std::string_view::npos) {
            auto name = percent_decode(rest.substr(slash + 1), false);
            if (!name || name->find('\0') != std::string::npos || !is_valid_utf8(*name)) invalid_uri();
            r.name = *name;
        }
    }
    while (!query.empty()) {
        size_t amp = query.find('&');
        std::string_view pair = query.substr(0, amp);
        size_t eq = pair.find('=');
        auto key = percent_decode(pair.substr(0, eq), true);
        auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
        if (!key || !value) invalid_uri();
        if (!key->empty()) r.query[text::lower(*key)].push_back(*value);
        if (amp == std::string_view::npos) break;
        query = query.substr(amp + 1);
    }
    return r;
}

}  // namespace

StorageRequest parse_storage_request(const httplib::Request& http) { return parse(http, true); }

StorageRequest parse_path_style_request(const httplib::Request& http) { return parse(http, false); }

}  // namespace bai::storage
