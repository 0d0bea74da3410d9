// A closed-loop HTTPS load generator for the ARM endpoint: C clients, each on its own keep-alive
// connection, send requests back to back for D seconds; prints one JSON line with the count, the
// errors and the latency percentiles. "{n}" in the path is replaced by a number unique to each
// request (job create needs a fresh name each time).
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/bench/closed_loop.h"

namespace {

struct Args {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string ca;
    std::string method = "GET";
    std::string path;
    std::string body;
    int clients = 8;
    double seconds = 10;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--port") a.port = std::stoi(value);
        else if (flag == "--ca") a.ca = value;
        else if (flag == "--method") a.method = value;
        else if (flag == "--path") a.path = value;
        else if (flag == "--body") a.body = read_file(value);
        else if (flag == "--clients") a.clients = std::stoi(value);
        else if (flag == "--seconds") a.seconds = std::stod(value);
        else if (flag == "--host") a.host = value;
    }
    return a;
}

std::string with_number(std::string path, long n) {
    size_t at = path.find("{n}");
    if (at != std::string::npos) path.replace(at, 3, std::to_string(n));
    return path;
}

}  // namespace

int main(int argc, char** argv) {
    Args args = parse(argc, argv);
    if (args.port == 0 || args.path.empty()) {
        std::fprintf(stderr, "usage: arm_load --port P --ca CERT --path PATH [--method GET|PUT] [--body FILE] "
                             "[--clients 8] [--seconds 10]\n");
        return 2;
    }
    std::atomic<long> next{0};
    std::atomic<long> errors{0};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(args.seconds);
    const int expected = args.method == "GET" ? 200 : 202;
    std::vector<double> latencies = bai::bench::run_clients(args.clients, [&](std::vector<double>& mine) {
        httplib::SSLClient client(args.host, args.port);
        client.set_ca_cert_path(args.ca.c_str());
        client.enable_server_certificate_verification(true);
        client.set_keep_alive(true);
        client.set_tcp_nodelay(true);  // as urllib3 does; otherwise Nagle holds the body 40 ms
        httplib::Headers headers{{"Authorization", "Bearer emulator-token"}};
        while (std::chrono::steady_clock::now() < deadline) {
            std::string path = with_number(args.path, next++);
            auto start = std::chrono::steady_clock::now();
            auto res = args.method == "GET" ? client.Get(path.c_str(), headers)
                                            : client.Put(path.c_str(), headers, args.body, "application/json");
            double ms = bai::bench::ms_since(start);
            if (!res || res->status != expected) {
                ++errors;
                continue;
            }
            mine.push_back(ms);
        }
    });
    bai::bench::print_summary(latencies, errors.load(), args.seconds);
    return 0;
}
