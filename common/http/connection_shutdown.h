// Ending idle keep-alive connections at shutdown. httplib's workers wait out the whole
// keep-alive timeout (5 s) on an idle connection before they notice the server stopped, and
// it offers no handle on accepted sockets; shutting the sockets down wakes them at once.
#pragma once

#include <set>

namespace bai::http {

// Shuts down (both directions) every connected socket of this process whose local port is in
// `ports`: the server side of connections accepted on those ports. Returns how many.
int shutdown_accepted_connections(const std::set<int>& ports);

}  // namespace bai::http
