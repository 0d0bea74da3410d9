#include "emulator/proxy/proxy_front.h"

#include "common/http/proxied_host.h"
#include "common/log/logger.h"
#include "emulator/proxy/azure_hosts.h"

namespace bai::proxy {
namespace {

httplib::Response refusal(int status, const std::string& message) {
    httplib::Response response;
    response.status = status;
    response.reason = std::string(status == 403 ? "Forbidden" : status == 400 ? "Bad Request" : "Bad Gateway") +
                      " (batchai-emulator proxy: " + message + ")";
    response.set_header("Connection", "close");
    response.set_content("batchai-emulator proxy: " + message + "\n", "text/plain; charset=utf-8");
    return response;
}

// What of a client's text an answer repeats: enough to recognise it, never a whole 64 KiB head.
std::string shown(std::string_view text) {
    constexpr size_t kMost = 200;
    std::string out;
    for (char c : text.substr(0, kMost)) out += (c < ' ' || c == 0x7f) ? '?' : c;
    return text.size() > kMost ? out + "..." : out;
}

const http::LeanListener::Handler* service_of(const ProxyServices& services, AzureService service) {
    switch (service) {
        case AzureService::arm: return &services.arm;
        case AzureService::sign_in: return &services.sign_in;
        case AzureService::blob: return &services.blob;
        case AzureService::file: return &services.file;
        case AzureService::batch: return &services.batch;
        case AzureService::unserved_storage:
        case AzureService::none: break;
    }
    return nullptr;
}

// A Storage service the emulator lacks, answered as a Storage service refuses: an XML error whose
// code and message say so, 403 (which no SDK retries; not one of the codes az turns into advice
// about credentials or network rules).
void answer_unserved_storage(const AzureHost& host, httplib::Response& response) {
    response.status = 403;
    response.set_header("x-ms-error-code", "ServiceNotServedHere");
    response.set_content("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>ServiceNotServedHere</Code><Message>The Batch AI "
                         "emulator does not serve " + host.host + ": " + host.refusal + "</Message></Error>",
                         "application/xml");
}

void serve(const ProxyServices& services, const AzureHost& host, const httplib::Request& request,
           httplib::Response& response, const httplib::ContentReader* body) {
    if (host.service == AzureService::unserved_storage) return answer_unserved_storage(host, response);
    const http::LeanListener::Handler* handler = service_of(services, host.service);
    if (handler == nullptr || !*handler) {
        response = refusal(403, "refused " + host.host + ": " + host.refusal);
        return;
    }
    const http::ProxiedHostScope scope(host.host);
    (*handler)(request, response, body);
}

}  // namespace

http::LeanListener::Handler proxy_handler(ProxyServices services) {
    return [services = std::move(services)](const httplib::Request& request, httplib::Response& response,
                                            const httplib::ContentReader* body) {
        // Through a tunnel: opened for an Azure host (the opener checked it), origin-form targets.
        if (const std::string& tunnel = http::LeanListener::tunnel_authority(); !tunnel.empty()) {
            std::optional<Authority> authority = parse_authority(tunnel);
            const AzureHost host = classify_host(authority ? authority->host : "");
            // Services write URLs from Host: it must name the tunnel's host, as the certificate does.
            std::optional<Authority> named = parse_authority(request.get_header_value("Host"), 443);
            if (!named || named->host != host.host || named->port != 443) {
                response = refusal(400, "the request's Host '" + shown(request.get_header_value("Host")) +
                                            "' is not the tunnel's host " + host.host);
                return;
            }
            return serve(services, host, request, response, body);
        }
        // A plain-HTTP request to the proxy: the target names the host (absolute form).
        const std::string& target = request.target;
        static constexpr std::string_view kHttp = "http://";
        if (target.size() < kHttp.size() || !std::equal(kHttp.begin(), kHttp.end(), target.begin(), [](char a, char b) {
                return a == std::tolower(static_cast<unsigned char>(b));
            })) {
            response = refusal(400, target.starts_with("/")
                                        ? "this is the emulator's HTTP proxy: send requests for Azure's host names "
                                          "through it (HTTPS_PROXY=http://HOST:PORT), not to it"
                                        : "the request target '" + shown(target) + "' is not an absolute http:// URL "
                                          "(https:// URLs go through a CONNECT tunnel)");
            return;
        }
        const size_t authority_end = target.find_first_of("/?", kHttp.size());
        const std::string_view authority_text =
            std::string_view(target).substr(kHttp.size(), authority_end == std::string::npos ? std::string::npos : authority_end - kHttp.size());
        std::optional<Authority> authority = parse_authority(authority_text, 80);
        if (!authority) {
            response = refusal(400, "the request target '" + shown(target) + "' does not name a host");
            return;
        }
        AzureHost host = classify_host(authority->host);
        if (host.service == AzureService::none) {
            response = refusal(403, "refused " + authority->host + ": " + host.refusal);
            return;
        }
        if (authority->port != 80) {
            response = refusal(403, "refused " + authority->host + ":" + std::to_string(authority->port) +
                                        ": the emulator serves Azure's hosts on port 80 (http) and 443 (https) only");
            return;
        }
        httplib::Request routed = request;
        routed.target = authority_end == std::string::npos ? "/" : target.substr(authority_end);
        if (routed.target.front() == '?') routed.target.insert(0, "/");
        routed.path = routed.target.substr(0, routed.target.find('?'));
        // The target's authority, not a Host the client sent besides (RFC 9112, 3.2.2).
        routed.headers.erase("Host");  // every one (httplib's header names compare without case)
        routed.set_header("Host", std::string(authority_text));
        serve(services, host, routed, response, body);
    };
}

http::LeanListener::TunnelOpener tunnel_opener(ProxyCa& ca) {
    return [&ca](const std::string& authority_text) {
        http::LeanListener::TunnelOpening opening;
        std::optional<Authority> authority = parse_authority(authority_text);
        if (!authority) {
            opening.refusal = refusal(400, "malformed CONNECT target '" + shown(authority_text) + "': it must be HOST:PORT");
            return opening;
        }
        AzureHost host = classify_host(authority->host);
        if (host.service == AzureService::none) {
            opening.refusal = refusal(403, "refused " + authority->host + ": " + host.refusal);
            return opening;
        }
        if (authority->port != 443) {
            opening.refusal = refusal(403, "refused " + authority->host + ":" + std::to_string(authority->port) +
                                               ": Azure's hosts are served on port 443 (https) and 80 (http) only");
            return opening;
        }
        try {
            opening.tls = ca.context_for(host.host);
        } catch (const std::exception& e) {
            log::error("proxy: no certificate for " + host.host + ": " + e.what());
            opening.refusal = refusal(502, "cannot make a certificate for " + host.host + ": " + e.what());
        }
        return opening;
    };
}

}  // namespace bai::proxy
