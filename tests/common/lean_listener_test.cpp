#include "common/http/lean_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

namespace bai::http {
namespace {

using namespace std::chrono_literals;

// A connection that writes bytes as given and reads what comes back.
class RawClient {
public:
    explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(static_cast<uint16_t>(port));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        timeval timeout{5, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    }
    ~RawClient() { ::close(fd_); }
    bool connected() const { return connected_; }
    void send(const std::string& bytes) { ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size())); }
    // Reads until `text` has come (or the connection ended, or 5 s passed); returns all read.
    std::string read_until(const std::string& text) {
        while (received_.find(text) == std::string::npos) {
            char buffer[4096];
            ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            received_.append(buffer, static_cast<size_t>(n));
        }
        return received_;
    }
    // Whether the server closed the connection (reads until it does, for 5 s at most).
    bool closed() {
        char buffer[4096];
        for (;;) {
            ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n == 0) return true;
            if (n < 0) return false;
            received_.append(buffer, static_cast<size_t>(n));
        }
    }

private:
    int fd_;
    bool connected_ = false;
    std::string received_;
};

// Echoes what it was asked, with the body it read; /provider answers from a content provider;
// /ignore-body reads no body.
class LeanListenerTest : public ::testing::Test {
protected:
    void SetUp() override {
        listener_ = std::make_unique<LeanListener>(
            "test", [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* body) {
                handle(req, res, body);
            });
        ASSERT_TRUE(listener_->bind("127.0.0.1", 0)) << listener_->error();
        listener_->start();
    }
    void TearDown() override { listener_->stop(); }

    void handle(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* body) {
        if (req.path == "/provider") {
            res.set_content_provider(6, "text/plain", [](size_t offset, size_t, httplib::DataSink& sink) {
                return sink.write(&"abcdef"[offset], 2);
            });
            return;
        }
        if (req.path == "/throw") throw std::runtime_error("boom");
        if (req.path == "/parts") {  // what came in request.body, what the reader gave (twice asked), the length
            std::string read;
            for (int i = 0; body != nullptr && i < 2; ++i) {
                (*body)([&](const char* data, size_t size) {
                    read.append(data, size);
                    return true;
                });
            }
            res.set_content("body [" + req.body + "] read [" + read + "] length [" + req.get_header_value("Content-Length") +
                                "] tls " + (LeanListener::serving_tls() ? "yes" : "no"),
                            "text/plain");
            return;
        }
        std::string received = req.body;
        if (body != nullptr && req.path != "/ignore-body") {
            (*body)([&](const char* data, size_t size) {
                received.append(data, size);
                return true;
            });
        }
        res.set_content(req.method + " " + req.target + " [" + received + "] " + req.remote_addr, "text/plain");
    }

    std::unique_ptr<LeanListener> listener_;
};

TEST_F(LeanListenerTest, AnswersRequestsOnOneKeepAliveConnection) {
    httplib::Client client("127.0.0.1", listener_->port());
    client.set_keep_alive(true);
    for (int round = 0; round < 3; ++round) {
        auto get = client.Get("/a?b=c");
        ASSERT_TRUE(get);
        EXPECT_EQ(get->status, 200);
        EXPECT_EQ(get->body, "GET /a?b=c [] 127.0.0.1");
        auto put = client.Put("/x", "payload", "text/plain");
        ASSERT_TRUE(put);
        EXPECT_EQ(put->body, "PUT /x [payload] 127.0.0.1");
        auto head = client.Head("/x");
        ASSERT_TRUE(head);
        EXPECT_EQ(head->status, 200);
        EXPECT_EQ(head->get_header_value("Content-Length"), std::to_string(std::string("HEAD /x [] 127.0.0.1").size()));
        EXPECT_TRUE(head->body.empty());
    }
    auto health = client.Get("/health");
    ASSERT_TRUE(health);
    EXPECT_NE(health->body.find("\"service\":\"test\""), std::string::npos);
}

// A client that sends each request as soon as the last answer is in may be waited for by
// spinning (quick_client_wait.h; whether it is depends on this machine's speed): its requests,
// whole or in two pieces, are read as any other's either way.
TEST_F(LeanListenerTest, AQuickClientsRequestsAreAnsweredWholeAndInOrder) {
    RawClient raw(listener_->port());
    ASSERT_TRUE(raw.connected());
    std::string expected_end;
    for (int i = 0; i < 200; ++i) {
        const std::string head = "PUT /q" + std::to_string(i) + " HTTP/1.1\r\nContent-Length: 2\r\n\r\nok";
        if (i % 10 == 9) {  // a head in two pieces: a spin may see the first, the rest is waited for
            raw.send(head.substr(0, 7));
            std::this_thread::sleep_for(2ms);
            raw.send(head.substr(7));
        } else {
            raw.send(head);
        }
        expected_end = "PUT /q" + std::to_string(i) + " [ok] 127.0.0.1";
        const std::string received = raw.read_until(expected_end);
        ASSERT_NE(received.find(expected_end), std::string::npos) << "request " << i;
    }
}

TEST_F(LeanListenerTest, AnswersARequestHandedOverWithoutASocketAsItsConnectionsWould) {
    auto answer = [&](const std::string& method, const std::string& target, const std::string& body = "") {
        httplib::Request request;
        request.method = method;
        request.target = target;
        request.path = target;  // as the replay hands it over
        request.body = body;
        httplib::Response response;
        listener_->answer(request, response);
        return response;
    };
    httplib::Response get = answer("GET", "/a?b=c");
    EXPECT_EQ(get.status, 200);
    EXPECT_EQ(get.body, "GET /a?b=c [] ");
    // The body is given once, through the reader, as a connection gives it: not twice.
    httplib::Response put = answer("PUT", "/x", "payload");
    EXPECT_EQ(put.body, "PUT /x [payload] ");
    // Through the reader only, once however often it is asked, with its length; the path without
    // the query, as a connection's request head gives it.
    EXPECT_EQ(answer("PUT", "/parts?a=b", "abc").body, "body [] read [abc] length [3] tls no");
    EXPECT_EQ(answer("GET", "/parts").body, "body [] read [] length [] tls no");
    EXPECT_EQ(answer("POST", "/x").body, "POST /x [] ");
    EXPECT_TRUE(answer("HEAD", "/x").body.empty());
    EXPECT_EQ(answer("GET", "/provider").body, "abcdef");
    EXPECT_EQ(answer("GET", "/throw").status, 500);
    EXPECT_NE(answer("GET", "/health?x=1").body.find("\"service\":\"test\""), std::string::npos);
    EXPECT_FALSE(LeanListener::serving_tls());
}

TEST_F(LeanListenerTest, SendsWhatAContentProviderGives) {
    httplib::Client client("127.0.0.1", listener_->port());
    auto provided = client.Get("/provider");
    ASSERT_TRUE(provided);
    EXPECT_EQ(provided->body, "abcdef");
}

TEST_F(LeanListenerTest, ReadsChunkedBodiesAndAnswersExpectContinue) {
    RawClient raw(listener_->port());
    ASSERT_TRUE(raw.connected());
    raw.send("PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\nTrailer: t\r\n\r\n");
    EXPECT_NE(raw.read_until("[abcdefg]").find("[abcdefg]"), std::string::npos);
    raw.send("PUT /e HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
    EXPECT_NE(raw.read_until("100 Continue\r\n\r\n").find("HTTP/1.1 100 Continue\r\n\r\n"), std::string::npos);
    raw.send("xyz");
    EXPECT_NE(raw.read_until("[xyz]").find("PUT /e [xyz]"), std::string::npos);
}

TEST_F(LeanListenerTest, ABodyTheHandlerDidNotReadIsSkippedAndTheConnectionStaysInStep) {
    RawClient raw(listener_->port());
    raw.send("PUT /ignore-body HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /next HTTP/1.1\r\n\r\n");
    std::string answers = raw.read_until("GET /next");
    EXPECT_NE(answers.find("PUT /ignore-body []"), std::string::npos);
    EXPECT_NE(answers.find("GET /next []"), std::string::npos);
}

TEST_F(LeanListenerTest, MalformedRequestsAre400AndEndTheConnection) {
    for (const char* bad : {"GET /\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
                            "PUT / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
                            "PUT / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"}) {
        RawClient raw(listener_->port());
        raw.send(bad);
        EXPECT_EQ(raw.read_until("\r\n\r\n").rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << bad;
        EXPECT_TRUE(raw.closed()) << bad;
    }
    RawClient huge(listener_->port());
    huge.send("GET / HTTP/1.1\r\nX: " + std::string(LeanListener::kMaxHead + 10, 'a'));
    EXPECT_EQ(huge.read_until("\r\n\r\n").rfind("HTTP/1.1 431 ", 0), 0u);
    EXPECT_TRUE(huge.closed());
    RawClient bad_chunk(listener_->port());
    bad_chunk.send("PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    EXPECT_TRUE(bad_chunk.closed());
}

TEST_F(LeanListenerTest, AHandlerThatThrowsIsAnswered500) {
    httplib::Client client("127.0.0.1", listener_->port());
    auto answer = client.Get("/throw");
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 500);
}

TEST_F(LeanListenerTest, ConnectionCloseAndHttp10EndTheConnectionAfterTheAnswer) {
    RawClient closing(listener_->port());
    closing.send("GET /a HTTP/1.1\r\nConnection: close\r\n\r\n");
    EXPECT_NE(closing.read_until("127.0.0.1").find("Connection: close\r\n"), std::string::npos);
    EXPECT_TRUE(closing.closed());
    RawClient old(listener_->port());
    old.send("GET /a HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(old.closed());
}

TEST_F(LeanListenerTest, StoppingEndsIdleConnectionsAtOnce) {
    RawClient idle(listener_->port());
    idle.send("GET /a HTTP/1.1\r\n\r\n");
    idle.read_until("127.0.0.1");
    auto started = std::chrono::steady_clock::now();
    listener_->stop();
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
    EXPECT_TRUE(idle.closed());
}

TEST(LeanListener, AStopRightAfterStartEndsIt) {
    for (int i = 0; i < 100; ++i) {
        LeanListener listener("test", [](const httplib::Request&, httplib::Response&, const httplib::ContentReader*) {});
        ASSERT_TRUE(listener.bind("127.0.0.1", 0));
        listener.start();
        listener.stop();
    }
}

TEST(LeanListener, BindingATakenPortSaysWhich) {
    LeanListener first("one", nullptr);
    ASSERT_TRUE(first.bind("127.0.0.1", 0));
    LeanListener second("two", nullptr);
    EXPECT_FALSE(second.bind("127.0.0.1", first.port()));
    EXPECT_NE(second.error().find(std::to_string(first.port())), std::string::npos);
    EXPECT_NE(second.error().find("(two)"), std::string::npos);
}

}  // namespace
}  // namespace bai::http
