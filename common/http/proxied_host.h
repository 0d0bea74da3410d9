// The Azure host name a request was addressed to when it came through the proxy front door
// (ACCOUNT.blob.core.windows.net, ACCOUNT.REGION.batch.azure.com, ...), for the services that take
// something from it (the storage and Batch accounts, the URLs they write back). It is set by the
// front door on the thread that hands the request to a service, for as long as the service
// handles it, so no header a client sends can claim it. Empty for a request sent to a service's
// own endpoint (path-style URLs).
#pragma once

#include <string>

namespace bai::http {

const std::string& proxied_host();

class ProxiedHostScope {
public:
    explicit ProxiedHostScope(std::string host);
    ~ProxiedHostScope();
    ProxiedHostScope(const ProxiedHostScope&) = delete;
    ProxiedHostScope& operator=(const ProxiedHostScope&) = delete;

private:
    std::string previous_;
};

}  // namespace bai::http
