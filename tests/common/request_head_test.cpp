#include "common/http/request_head.h"

#include <gtest/gtest.h>

namespace bai::http {
namespace {

struct Parsed {
    std::optional<HeadError> error;
    httplib::Request request;
    BodyFraming framing;
};

Parsed parse(const std::string& head) {
    Parsed p;
    p.error = parse_request_head(head, p.request, p.framing);
    return p;
}

int status_of(const std::string& head) {
    Parsed p = parse(head);
    return p.error ? p.error->status : 0;
}

TEST(RequestHead, ReadsTheRequestLineAndHeaders) {
    Parsed p = parse("PUT /acct/c/a%20b?comp=block&blockid=x HTTP/1.1\r\nHost: h\r\nx-ms-meta-k:  v w \r\n"
                     "Content-Length: 12\r\n\r\n");
    ASSERT_FALSE(p.error) << p.error->message;
    EXPECT_EQ(p.request.method, "PUT");
    EXPECT_EQ(p.request.target, "/acct/c/a%20b?comp=block&blockid=x");
    EXPECT_EQ(p.request.path, "/acct/c/a%20b");
    EXPECT_EQ(p.request.version, "HTTP/1.1");
    EXPECT_EQ(p.request.get_header_value("X-MS-META-K"), "v w");
    EXPECT_EQ(p.framing.length, 12u);
    EXPECT_FALSE(p.framing.chunked);
    EXPECT_TRUE(p.framing.keep_alive);
}

TEST(RequestHead, SaysHowTheBodyIsFramedAndWhetherTheConnectionStays) {
    Parsed chunked = parse("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nExpect: 100-continue\r\n\r\n");
    ASSERT_FALSE(chunked.error);
    EXPECT_TRUE(chunked.framing.chunked);
    EXPECT_TRUE(chunked.framing.expects_continue);
    EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").framing.keep_alive);
    EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").framing.keep_alive);
    EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").framing.keep_alive);
    EXPECT_EQ(parse("PUT / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n").framing.length, 5u);
}

TEST(RequestHead, RefusesMalformedHeads) {
    EXPECT_EQ(status_of("GET / HTTP/1.1\r\n"), 400);                  // unterminated
    EXPECT_EQ(status_of("GET /\r\n\r\n"), 400);                       // no version
    EXPECT_EQ(status_of("GET  HTTP/1.1\r\n\r\n"), 400);               // empty target
    EXPECT_EQ(status_of("G(T / HTTP/1.1\r\n\r\n"), 400);              // method not a token
    EXPECT_EQ(status_of("GET /a\x01 HTTP/1.1\r\n\r\n"), 400);          // control in target
    EXPECT_EQ(status_of("GET / HTTP/2.0\r\n\r\n"), 505);
    EXPECT_EQ(status_of("GET / FTP/1.1\r\n\r\n"), 400);
    EXPECT_EQ(status_of("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400);
    EXPECT_EQ(status_of("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), 400);
    EXPECT_EQ(status_of("GET / HTTP/1.1\r\nBad Name: b\r\n\r\n"), 400);
    constexpr char kNul[] = "GET / HTTP/1.1\r\nA: b\0c\r\n\r\n";
    EXPECT_EQ(status_of(std::string(kNul, sizeof kNul - 1)), 400);
    EXPECT_EQ(status_of("GET / HTTP/1.1\r\nA: b\r\n\r\nB: c\r\n\r\n"), 400);  // blank line inside
    EXPECT_EQ(status_of("PUT / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
    EXPECT_EQ(status_of("PUT / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"), 400);
    EXPECT_EQ(status_of("PUT / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
    EXPECT_EQ(status_of("PUT / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
    EXPECT_EQ(status_of("PUT / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
    EXPECT_EQ(status_of("PUT / HTTP/1.1\r\nExpect: something\r\n\r\n"), 417);
}

TEST(RequestHead, ReadsChunkSizes) {
    EXPECT_EQ(parse_chunk_size("1a"), 26u);
    EXPECT_EQ(parse_chunk_size("FF;name=value"), 255u);
    EXPECT_EQ(parse_chunk_size("0"), 0u);
    EXPECT_FALSE(parse_chunk_size(""));
    EXPECT_FALSE(parse_chunk_size("x1"));
    EXPECT_FALSE(parse_chunk_size("-1"));
    EXPECT_FALSE(parse_chunk_size("1000000000000000"));  // past 2^60
}

}  // namespace
}  // namespace bai::http
