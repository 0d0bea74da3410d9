// The proxy front door: an HTTP proxy endpoint (HTTPS_PROXY=http://127.0.0.1:P) through which
// programs written for the cloud reach the emulator at Azure's own host names. A CONNECT to
// HOST:443 opens a tunnel whose TLS the proxy ends itself, with a certificate for HOST from its
// own CA; a plain-HTTP request in absolute form (GET http://HOST/...) is served as it comes. Either
// way the request goes to the service that HOST names (azure_hosts.h), through the same handler as
// the service's own endpoint, with http::proxied_host() set to HOST. Other hosts and ports are
// refused at once, with an answer that names them and says why.
#pragma once

#include "common/http/lean_listener.h"
#include "emulator/proxy/proxy_ca.h"

namespace bai::proxy {

struct ProxyServices {
    http::LeanListener::Handler arm;
    http::LeanListener::Handler sign_in;
    http::LeanListener::Handler blob;
    http::LeanListener::Handler file;
    http::LeanListener::Handler batch;
};

// The handler of the proxy's listener.
http::LeanListener::Handler proxy_handler(ProxyServices services);

// What the proxy's listener does with a CONNECT: a tunnel to an Azure host on port 443, served
// with `ca`'s certificate for it; a refusal for anything else. `ca` must outlive the listener.
http::LeanListener::TunnelOpener tunnel_opener(ProxyCa& ca);

}  // namespace bai::proxy
