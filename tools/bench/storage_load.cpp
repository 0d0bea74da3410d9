// A closed-loop Blob load generator for tools/bench/storage_side_by_side.py: one keep-alive
// connection per client, SharedKey-signed requests back to back. `--op put` stores COUNT blobs of
// SIZE bytes (b00000...) in CONTAINER; `--op get` makes COUNT reads of the first BLOBS of them;
// `--op download` reads b00000 (of SIZE bytes, say 256 MiB) COUNT times into memory the client
// already owns. Prints one JSON line with the count, the errors, the rate and the latency
// percentiles. A client this lean shows what the server costs: the shared bench's Python client
// spends about 110 us of its own per request, more than this emulator does.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "scenarios/replay/storage_signer.h"
#include "tools/bench/closed_loop.h"
#include "tools/bench/raw_http_connection.h"

namespace {

struct Args {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string account = "devstoreaccount1";
    std::string key;
    std::string container;
    std::string op = "get";
    int count = 1000;
    int blobs = 0;  // how many exist to be read (0: COUNT)
    size_t size = 4096;
    int clients = 1;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--port") a.port = std::stoi(value);
        else if (flag == "--host") a.host = value;
        else if (flag == "--account") a.account = value;
        else if (flag == "--key") a.key = value;
        else if (flag == "--container") a.container = value;
        else if (flag == "--op") a.op = value;
        else if (flag == "--count") a.count = std::stoi(value);
        else if (flag == "--blobs") a.blobs = std::stoi(value);
        else if (flag == "--size") a.size = std::stoul(value);
        else if (flag == "--clients") a.clients = std::stoi(value);
    }
    return a;
}

std::string blob_path(const Args& a, long n) {
    char name[32];
    std::snprintf(name, sizeof name, "b%05ld", n % (a.blobs > 0 ? a.blobs : a.count));
    return "/" + a.account + "/" + a.container + "/" + name;
}

}  // namespace

int main(int argc, char** argv) {
    Args args = parse(argc, argv);
    if (args.port == 0 || args.key.empty() || args.container.empty() || (args.op != "get" && args.op != "put" && args.op != "download")) {
        std::fprintf(stderr, "usage: storage_load --port P --key BASE64 --container C --op get|put|download "
                             "[--count 1000] [--blobs N] [--size 4096] [--clients 1] [--account devstoreaccount1]\n");
        return 2;
    }
    const std::string body(args.op == "put" ? args.size : 0, 'x');
    std::atomic<long> next{0};
    std::atomic<long> errors{0};
    auto started = std::chrono::steady_clock::now();
    const bool reads = args.op != "put";
    std::vector<double> latencies = bai::bench::run_clients(args.clients, [&](std::vector<double>& mine) {
        bai::bench::RawHttpConnection connection(args.host, args.port);
        // The answer's buffer is sized and touched before the first request, so that no request
        // pays for the client's first use of its memory.
        std::vector<char> answer(args.size, '\0');
        for (long n = next++; n < args.count; n = next++) {
            httplib::Request request;
            request.method = reads ? "GET" : "PUT";
            request.target = blob_path(args, args.op == "download" ? 0 : n);
            if (!reads) {
                request.body = body;
                request.set_header("x-ms-blob-type", "BlockBlob");
            }
            bai::storage::sign_shared_key(request, args.account, args.key);
            auto start = std::chrono::steady_clock::now();
            int status = connection.send(request, answer);
            double ms = bai::bench::ms_since(start);
            if (status != (reads ? 200 : 201) || (reads && answer.size() != args.size)) {
                ++errors;
                continue;
            }
            mine.push_back(ms);
        }
    });
    bai::bench::print_summary(latencies, errors.load(),
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return errors.load() == 0 ? 0 : 1;
}
