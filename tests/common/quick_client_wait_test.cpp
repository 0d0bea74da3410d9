#include "common/http/quick_client_wait.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace bai::http {
namespace {

using namespace std::chrono_literals;

// A connected pair of sockets: [0] is the server's end, [1] the client's.
class SocketPair {
public:
    SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
    ~SocketPair() {
        for (int fd : fds_) {
            if (fd >= 0) ::close(fd);
        }
    }
    int server() const { return fds_[0]; }
    void client_sends(const char* text) { ASSERT_GT(::send(fds_[1], text, std::strlen(text), 0), 0); }
    void client_closes() {
        ::close(fds_[1]);
        fds_[1] = -1;
    }

private:
    int fds_[2] = {-1, -1};
};

// A client that sent its last request 10 us after the connection began to wait for it.
QuickClientWait quick_client() {
    QuickClientWait wait;
    const auto waited = QuickClientWait::Clock::now();
    wait.waits(waited);
    wait.arrived(waited + 10us);
    return wait;
}

TEST(QuickClientWait, AClientIsQuickOnlyWhenItsRequestCameWithinTheWindow) {
    QuickClientWait wait;
    EXPECT_FALSE(wait.quick());
    wait.arrived();  // no wait began: nothing to measure
    EXPECT_FALSE(wait.quick());
    EXPECT_TRUE(quick_client().quick());
    const auto waited = QuickClientWait::Clock::now();
    wait.waits(waited);
    wait.arrived(waited + QuickClientWait::kQuick - 1us);
    EXPECT_TRUE(wait.quick());
    wait.waits(waited);
    wait.arrived(waited + QuickClientWait::kQuick);
    EXPECT_FALSE(wait.quick());
}

TEST(QuickClientWait, SpinsOnlyForAQuickClient) {
    SocketPair pair;
    pair.client_sends("GET / HTTP/1.1\r\n");
    QuickClientWait slow;
    EXPECT_FALSE(slow.spin(pair.server()));  // the bytes are there, but nothing is checked for a slow client
    QuickClientWait quick = quick_client();
    EXPECT_TRUE(quick.spin(pair.server()));
    char buffer[64];
    EXPECT_EQ(::recv(pair.server(), buffer, sizeof buffer, MSG_DONTWAIT), 16) << "spinning must not consume what it saw";
}

TEST(QuickClientWait, GivesUpWhenNothingComesAndSeesTheEndOfTheStream) {
    SocketPair pair;
    QuickClientWait quick = quick_client();
    EXPECT_FALSE(quick.spin(pair.server()));  // nothing sent: back to poll()
    pair.client_closes();
    EXPECT_TRUE(quick.spin(pair.server()));  // the end is there to be read at once
}

TEST(QuickClientWait, NoOneSpinsWhileARequestIsBeingAnswered) {
    SocketPair pair;
    pair.client_sends("x");
    QuickClientWait quick = quick_client();
    {
        const QuickClientWait::Busy busy;
        EXPECT_FALSE(quick.spin(pair.server()));
    }
    EXPECT_TRUE(quick.spin(pair.server()));
}

}  // namespace
}  // namespace bai::http
