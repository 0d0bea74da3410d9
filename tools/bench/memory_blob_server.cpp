// The least any Blob server can do, for tools/bench/storage_side_by_side.py: it keeps PUT bodies
// in memory by path and answers GET with them, with the same response headers as the emulator
// (so a client parses as much), no authentication, no store. What a client reaches against it is
// the most that client can show of any server on this machine.
//
//   memory_blob_server PORT
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>

#include "tools/bench/http_wire.h"

namespace {

using bai::bench::send_all;

std::shared_mutex blobs_mutex;
std::map<std::string, std::string, std::less<>> blobs;

// The headers the emulator sends with a Get Blob (values of the same length), minus the length.
constexpr std::string_view kGetHeaders =
    "HTTP/1.1 200 OK\r\nAccept-Ranges: bytes\r\nContent-MD5: IEOfeeTp3JW+NLIQKSIfgA==\r\n"
    "Content-Type: application/octet-stream\r\nDate: Mon, 23 Nov 2026 21:56:23 GMT\r\n"
    "ETag: \"0x47C9B6A60A9663\"\r\nLast-Modified: Mon, 23 Nov 2026 21:56:23 GMT\r\n"
    "Server: batchai-emulator-blob\r\nx-ms-blob-type: BlockBlob\r\n"
    "x-ms-creation-time: Mon, 23 Nov 2026 21:56:23 GMT\r\nx-ms-lease-state: available\r\n"
    "x-ms-lease-status: unlocked\r\nx-ms-request-id: 49b205a9-504a-4298-8617-c30613d176e8\r\n"
    "x-ms-server-encrypted: true\r\nx-ms-version: 2021-06-08\r\nContent-Length: ";
constexpr std::string_view kCreated =
    "HTTP/1.1 201 Created\r\nContent-MD5: IEOfeeTp3JW+NLIQKSIfgA==\r\nDate: Mon, 23 Nov 2026 21:56:23 GMT\r\n"
    "ETag: \"0x47C9B6A60A9663\"\r\nLast-Modified: Mon, 23 Nov 2026 21:56:23 GMT\r\n"
    "Server: batchai-emulator-blob\r\nx-ms-request-id: 49b205a9-504a-4298-8617-c30613d176e8\r\n"
    "x-ms-request-server-encrypted: true\r\nx-ms-version: 2021-06-08\r\nContent-Length: 0\r\n\r\n";
constexpr std::string_view kNotFound = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

void serve(int fd) {
    std::string in;
    char chunk[65536];
    for (;;) {
        size_t head_end;
        while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
            ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) return (void)::close(fd);
            in.append(chunk, static_cast<size_t>(n));
        }
        std::string_view head(in.data(), head_end + 4);
        size_t length = bai::bench::content_length_of(head);
        while (in.size() < head.size() + length) {
            ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) return (void)::close(fd);
            in.append(chunk, static_cast<size_t>(n));
            head = std::string_view(in.data(), head_end + 4);
        }
        std::string_view method = head.substr(0, head.find(' '));
        std::string_view target = head.substr(method.size() + 1, head.find(' ', method.size() + 1) - method.size() - 1);
        std::string path(target.substr(0, target.find('?')));
        bool ok = true;
        if (method == "PUT") {
            {
                std::unique_lock lock(blobs_mutex);
                blobs[path] = in.substr(head.size(), length);
            }
            ok = send_all(fd, kCreated);
        } else {
            // Bodies are sent from the map (a blob is not replaced while it is read here).
            std::string_view body;
            bool found = false;
            {
                std::shared_lock lock(blobs_mutex);
                if (auto it = blobs.find(path); it != blobs.end()) {
                    found = true;
                    body = it->second;
                }
            }
            if (!found) {
                ok = send_all(fd, kNotFound);
            } else {
                std::string answer;
                answer.append(kGetHeaders).append(std::to_string(body.size())).append("\r\n\r\n");
                if (method != "HEAD" && body.size() <= 65536) {
                    answer.append(body);
                    body = {};
                }
                ok = send_all(fd, answer);
                // In 1 MiB pieces, as the emulator sends (one send of 256 MiB was a third slower).
                for (size_t at = 0; ok && method != "HEAD" && at < body.size(); at += 1 << 20) {
                    ok = send_all(fd, body.substr(at, 1 << 20));
                }
            }
        }
        in.erase(0, head_end + 4 + length);
        if (!ok) return (void)::close(fd);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: memory_blob_server PORT\n");
        return 2;
    }
    int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(listener, 64) != 0) {
        std::perror("memory_blob_server");
        return 1;
    }
    for (;;) {
        int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::thread(serve, fd).detach();
    }
}
