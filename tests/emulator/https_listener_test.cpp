// The lean listener over TLS with the emulator's own certificate, as ARM serves: routes, bodies,
// keep-alive, a client that does not trust the certificate, and a handshake that never finishes;
// and, as the Batch endpoint serves, plain HTTP and TLS on one port.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include "common/http/lean_listener.h"
#include "common/http/routes.h"
#include "emulator/tls/self_signed_cert.h"
#include "tests/common/test_dir.h"

namespace bai::http {
namespace {

class HttpsListenerTest : public ::testing::Test {
protected:
    void SetUp() override {
        // httplib's TLS client writes with SSL_write too: a 413 that closes the connection before
        // the client has sent its whole body must not end the test.
        ::signal(SIGPIPE, SIG_IGN);
        files = tls::ensure_certificate(dir / "tls", "127.0.0.1");
        routes.Get("/things/([^/]+)", [](const httplib::Request& req, httplib::Response& res) {
            res.set_content("thing " + std::string(req.matches[1]), "text/plain");
        });
        routes.Get("/scheme", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(LeanListener::serving_tls() ? "https" : "http", "text/plain");
        });
        routes.Put("/things/([^/]+)", [](const httplib::Request& req, httplib::Response& res) {
            res.status = 201;
            res.set_content(std::to_string(req.body.size()) + " bytes for " + std::string(req.matches[1]), "text/plain");
        });
        listener = std::make_unique<LeanListener>("arm", serve_routes(routes, 1 << 20));
        listener->use_tls(make_server_tls(files.certificate.string(), files.private_key.string()));
        ASSERT_TRUE(listener->bind("127.0.0.1", 0)) << listener->error();
        listener->start();
    }
    void TearDown() override { listener->stop(); }

    std::unique_ptr<httplib::SSLClient> client() {
        auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", listener->port());
        c->set_ca_cert_path(files.certificate.c_str());
        c->enable_server_certificate_verification(true);
        c->set_read_timeout(5, 0);
        return c;
    }

    testing::TestDir dir;
    tls::CertificateFiles files;
    Routes routes;
    std::unique_ptr<LeanListener> listener;
};

TEST_F(HttpsListenerTest, RoutesAnswerOverTlsOnOneKeepAliveConnection) {
    std::unique_ptr<httplib::SSLClient> owned = client();
    httplib::SSLClient& c = *owned;
    c.set_keep_alive(true);
    for (int i = 0; i < 3; ++i) {
        auto got = c.Get("/things/a%20b");
        ASSERT_TRUE(got) << httplib::to_string(got.error());
        EXPECT_EQ(got->status, 200);
        EXPECT_EQ(got->body, "thing a b");
        std::string big(300000, 'x');  // more than one TLS record and one read
        auto put = c.Put("/things/t", big, "application/octet-stream");
        ASSERT_TRUE(put);
        EXPECT_EQ(put->status, 201);
        EXPECT_EQ(put->body, "300000 bytes for t");
    }
    auto health = c.Get("/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    auto missing = c.Get("/nothing");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404);
    auto too_big = c.Put("/things/t", std::string((1 << 20) + 1, 'x'), "application/octet-stream");
    ASSERT_TRUE(too_big);
    EXPECT_EQ(too_big->status, 413);
}

TEST_F(HttpsListenerTest, AClientThatDoesNotTrustTheCertificateGetsNoAnswer) {
    httplib::SSLClient c("127.0.0.1", listener->port());
    c.enable_server_certificate_verification(true);  // the system's CAs only
    EXPECT_FALSE(c.Get("/health"));
    // The listener serves the next client as usual.
    auto got = client()->Get("/health");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->status, 200);
}

TEST_F(HttpsListenerTest, PlainHttpOnTheTlsPortIsDropped) {
    httplib::Client plain("127.0.0.1", listener->port());
    plain.set_read_timeout(5, 0);
    auto got = plain.Get("/health");
    EXPECT_FALSE(got && got->status == 200);
    ASSERT_TRUE(client()->Get("/health"));
}

TEST_F(HttpsListenerTest, AnOptionalTlsListenerServesBothOnOnePort) {
    LeanListener both("batch", serve_routes(routes, 1 << 20, [](httplib::Request& req) {
                          // The rewrite runs before routing: /prefix/scheme is routed as /scheme.
                          if (req.path.rfind("/prefix/", 0) == 0) req.path.erase(0, 7);
                      }));
    both.use_tls(make_server_tls(files.certificate.string(), files.private_key.string()), true);
    ASSERT_TRUE(both.bind("127.0.0.1", 0)) << both.error();
    both.start();
    httplib::Client plain("127.0.0.1", both.port());
    plain.set_keep_alive(true);
    httplib::SSLClient secure("127.0.0.1", both.port());
    secure.set_ca_cert_path(files.certificate.c_str());
    secure.enable_server_certificate_verification(true);
    secure.set_keep_alive(true);
    for (int i = 0; i < 2; ++i) {  // alternating, each on its own kept-alive connection
        auto over_plain = plain.Get("/prefix/scheme");
        ASSERT_TRUE(over_plain) << httplib::to_string(over_plain.error());
        EXPECT_EQ(over_plain->body, "http");
        auto over_tls = secure.Get("/scheme");
        ASSERT_TRUE(over_tls) << httplib::to_string(over_tls.error());
        EXPECT_EQ(over_tls->body, "https");
        auto put = secure.Put("/things/t", std::string(300000, 'x'), "application/octet-stream");
        ASSERT_TRUE(put);
        EXPECT_EQ(put->body, "300000 bytes for t");
    }
    // A client that trusts nothing gets no answer over TLS, and the port still serves both.
    httplib::SSLClient untrusting("127.0.0.1", both.port());
    untrusting.enable_server_certificate_verification(true);
    EXPECT_FALSE(untrusting.Get("/scheme"));
    auto again = plain.Get("/scheme");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->body, "http");
    both.stop();
}

}  // namespace
}  // namespace bai::http
