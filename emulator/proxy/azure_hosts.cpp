#include "emulator/proxy/azure_hosts.h"

#include <cctype>
#include <charconv>

#include "common/text/ascii.h"

namespace bai::proxy {
namespace {

// Storage and Batch account names: 3 to 24 lower-case letters and digits.
bool is_account_name(std::string_view name) {
    if (name.size() < 3 || name.size() > 24) return false;
    for (char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
}

bool is_region_name(std::string_view name) {
    if (name.empty() || name.size() > 40) return false;
    for (char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
    }
    return true;
}

bool is_host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_';
}

AzureHost refuse(AzureHost host, std::string why) {
    host.service = AzureService::none;
    host.refusal = std::move(why);
    return host;
}

}  // namespace

const char* served_names() {
    return "management.azure.com, login.microsoftonline.com (and login.windows.net, login.microsoft.com, "
           "sts.windows.net), ACCOUNT.blob.core.windows.net, ACCOUNT.file.core.windows.net and "
           "ACCOUNT.REGION.batch.azure.com";
}

AzureHost classify_host(std::string_view raw) {
    AzureHost out;
    out.host = text::lower(raw);
    if (!out.host.empty() && out.host.back() == '.') out.host.pop_back();  // the root's dot
    const std::string& h = out.host;
    const std::string not_served = "the emulator's proxy serves Azure's host names only (" + std::string(served_names()) + ")";
    if (h.empty()) return refuse(out, "no host name was given: " + not_served);
    if (h == "management.azure.com") {
        out.service = AzureService::arm;
        return out;
    }
    if (h == "login.microsoftonline.com" || h == "login.windows.net" || h == "login.microsoft.com" || h == "sts.windows.net") {
        out.service = AzureService::sign_in;
        return out;
    }
    auto under = [&](std::string_view suffix) -> std::optional<std::string_view> {
        if (h.size() <= suffix.size() || !h.ends_with(suffix)) return std::nullopt;
        return std::string_view(h).substr(0, h.size() - suffix.size());
    };
    for (auto [suffix, service] : {std::pair{".blob.core.windows.net", AzureService::blob},
                                   std::pair{".file.core.windows.net", AzureService::file}}) {
        auto label = under(suffix);
        if (!label) continue;
        std::string_view account = *label;
        if (account.ends_with("-secondary")) {
            account.remove_suffix(std::string_view("-secondary").size());
            out.secondary = true;
        }
        if (!is_account_name(account)) {
            return refuse(out, "'" + std::string(*label) + "' is not a storage account name (3 to 24 lower-case letters and digits)");
        }
        out.account = account;
        out.service = service;
        return out;
    }
    if (auto rest = under(".batch.azure.com")) {
        const size_t dot = rest->find('.');
        if (dot == std::string_view::npos || rest->find('.', dot + 1) != std::string_view::npos ||
            !is_account_name(rest->substr(0, dot)) || !is_region_name(rest->substr(dot + 1))) {
            return refuse(out, "a Batch account's host name is ACCOUNT.REGION.batch.azure.com (an account name of 3 to 24 "
                               "lower-case letters and digits)");
        }
        out.account = rest->substr(0, dot);
        out.service = AzureService::batch;
        return out;
    }
    for (const char* other : {".queue.core.windows.net", ".table.core.windows.net", ".dfs.core.windows.net", ".web.core.windows.net"}) {
        if (auto label = under(other); label && is_account_name(*label)) {
            out.service = AzureService::unserved_storage;
            out.account = *label;
            out.refusal = h + " is a storage service the emulator does not serve (it serves Blob and File): " + not_served;
            return out;
        }
        if (under(other)) return refuse(out, h + " is a storage service the emulator does not serve: " + not_served);
    }
    return refuse(out, h + " is not one of them: " + not_served);
}

std::optional<Authority> parse_authority(std::string_view authority, int default_port) {
    Authority out;
    std::string_view host;
    std::string_view port;
    bool has_port = false;
    if (!authority.empty() && authority.front() == '[') {
        const size_t close = authority.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return std::nullopt;
            port = after.substr(1);
            has_port = true;
        }
        for (char c : host) {
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return std::nullopt;
        }
    } else {
        const size_t colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            port = authority.substr(colon + 1);
            has_port = true;
        }
        for (char c : host) {
            if (!is_host_char(c)) return std::nullopt;
        }
    }
    if (host.empty() || host.size() > 253) return std::nullopt;
    if (!has_port) {
        if (default_port == 0) return std::nullopt;
        out.port = default_port;
    } else {
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
        if (ec != std::errc() || end != port.data() + port.size() || out.port < 1 || out.port > 65535) return std::nullopt;
    }
    out.host = text::lower(host);
    return out;
}

}  // namespace bai::proxy
