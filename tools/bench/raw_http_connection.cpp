#include "tools/bench/raw_http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "tools/bench/http_wire.h"

namespace bai::bench {

RawHttpConnection::RawHttpConnection(const std::string& host, int port) : host_(host), port_(port) {}

RawHttpConnection::~RawHttpConnection() {
    if (fd_ >= 0) ::close(fd_);
}

bool RawHttpConnection::connect_once() {
    if (fd_ >= 0) return true;
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port_));
    if (fd_ < 0 || inet_pton(AF_INET, host_.c_str(), &address.sin_addr) != 1 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        return false;
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    in_.clear();
    return true;
}

size_t RawHttpConnection::read_head() {
    for (;;) {
        std::string_view have(in_.data(), in_.size());
        if (size_t end = have.find("\r\n\r\n"); end != std::string_view::npos) return end + 4;
        size_t old = in_.size();
        in_.resize(old + 16384);
        ssize_t n = ::recv(fd_, in_.data() + old, 16384, 0);
        in_.resize(old + static_cast<size_t>(n > 0 ? n : 0));
        if (n <= 0) return 0;
    }
}

int RawHttpConnection::send(const httplib::Request& request, std::vector<char>& body) {
    if (!connect_once()) return -1;
    out_.clear();
    out_ += request.method;
    out_ += ' ';
    out_ += request.target;
    out_ += " HTTP/1.1\r\nHost: ";
    out_ += host_;
    out_ += "\r\n";
    for (const auto& [name, value] : request.headers) {
        out_ += name;
        out_ += ": ";
        out_ += value;
        out_ += "\r\n";
    }
    out_ += "\r\n";
    out_ += request.body;
    size_t head = 0;
    if (!send_all(fd_, out_) || (head = read_head()) == 0) {
        ::close(fd_);
        fd_ = -1;
        return -1;
    }
    std::string_view text(in_.data(), head);
    int status = std::atoi(text.substr(text.find(' ') + 1).data());
    size_t length = request.method == "HEAD" ? 0 : content_length_of(text);
    body.resize(length);
    size_t have = std::min(length, in_.size() - head);
    std::memcpy(body.data(), in_.data() + head, have);
    in_.erase(in_.begin(), in_.begin() + static_cast<long>(head + have));
    while (have < length) {
        ssize_t n = ::recv(fd_, body.data() + have, length - have, 0);
        if (n <= 0) {
            ::close(fd_);
            fd_ = -1;
            return -1;
        }
        have += static_cast<size_t>(n);
    }
    return status;
}

}  // namespace bai::bench
