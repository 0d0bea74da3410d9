// One keep-alive HTTP/1.1 connection over a plain socket, for the load generators: it writes a
// request as given and reads the response's status, headers and Content-Length body, with no
// more work of its own than that, so that what a benchmark measures is the server.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

namespace bai::bench {

class RawHttpConnection {
public:
    RawHttpConnection(const std::string& host, int port);
    ~RawHttpConnection();
    RawHttpConnection(const RawHttpConnection&) = delete;
    RawHttpConnection& operator=(const RawHttpConnection&) = delete;

    // Sends `request` (method, target, headers, body) and reads the answer into `body`, which
    // keeps its capacity from call to call. Returns the status, or -1 when the connection failed
    // (it is then closed and reopened by the next call).
    int send(const httplib::Request& request, std::vector<char>& body);

private:
    bool connect_once();
    // Reads until the buffer holds a whole response head; returns its length, 0 on failure.
    size_t read_head();

    std::string host_;
    int port_;
    int fd_ = -1;
    std::string out_;
    std::vector<char> in_;  // bytes read but not yet consumed
};

}  // namespace bai::bench
