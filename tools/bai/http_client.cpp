#include "tools/bai/http_client.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace bai::cli {
namespace {

// The URL's host is exactly localhost, [::1] or an address of 127.0.0.0/8.
bool is_loopback_url(const std::string& url) {
    size_t start = url.find("://");
    start = start == std::string::npos ? 0 : start + 3;
    std::string host = url.substr(start, url.find_first_of("/?#", start) - start);
    if (host.rfind("[::1]", 0) == 0) return host.size() == 5 || host[5] == ':';
    host = host.substr(0, host.find(':'));
    if (host == "localhost") return true;
    int parts = 0;
    for (size_t at = 0; at <= host.size(); ++parts) {
        size_t dot = host.find('.', at);
        std::string part = host.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
        if (part.empty() || part.size() > 3 || part.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(part) > 255 || (parts == 0 && part != "127")) {
            return false;
        }
        if (dot == std::string::npos) break;
        at = dot + 1;
    }
    return parts == 3;
}

}  // namespace

std::unique_ptr<httplib::Client> make_client(const std::string& base_url, const std::string& ca_cert,
                                             std::chrono::milliseconds timeout) {
    bool https = base_url.rfind("https://", 0) == 0;
    if (!https && base_url.rfind("http://", 0) != 0) {
        throw std::invalid_argument("not an http:// or https:// URL: '" + base_url + "'");
    }
    auto client = std::make_unique<httplib::Client>(base_url);
    if (!client->is_valid()) throw std::invalid_argument("cannot use URL '" + base_url + "'");
    if (https) {
        if (!ca_cert.empty()) {
            client->set_ca_cert_path(ca_cert.c_str());
            client->enable_server_certificate_verification(true);
        } else if (is_loopback_url(base_url)) {
            client->enable_server_certificate_verification(false);
        } else {
            throw std::invalid_argument("HTTPS to a non-loopback host needs --ca-cert");
        }
    }
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout - seconds);
    client->set_connection_timeout(seconds.count(), micros.count());
    client->set_read_timeout(seconds.count(), micros.count());
    return client;
}

httplib::Result get_url(const std::string& url, const httplib::Headers& headers, const std::string& ca_cert,
                        std::chrono::milliseconds timeout) {
    size_t scheme = url.find("://");
    size_t slash = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
    std::string origin = slash == std::string::npos ? url : url.substr(0, slash);
    std::string target = slash == std::string::npos ? "/" : url.substr(slash);
    return make_client(origin, ca_cert, timeout)->Get(target, headers);
}

void discover_storage_endpoints(endpoints::Endpoints& e) {
    try {
        auto client = make_client(e.arm, e.ca_cert, std::chrono::seconds(2));
        httplib::Result result = client->Get("/emulator/endpoints");
        if (!result || result->status != 200) return;
        auto body = nlohmann::json::parse(result->body, nullptr, false);
        if (!body.is_object()) return;
        e.blob = body.value("blob", "");
        e.file = body.value("file", "");
        e.batch = body.value("batch", "");
        e.proxy = body.value("proxy", "");
        e.proxy_ca = body.value("proxy_ca", "");
        e.ca_bundle = body.value("ca_bundle", "");
    } catch (const std::exception&) {
    }
}

}  // namespace bai::cli
