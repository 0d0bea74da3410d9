#include "common/time/timestamps.h"

#include <gtest/gtest.h>

namespace bai::time {
namespace {

TEST(Timestamps, Rfc1123FormatsEveryFieldAndReadsBack) {
    for (const char* text : {"Sun, 22 Nov 2026 04:15:00 GMT", "Thu, 01 Jan 1970 00:00:00 GMT",
                             "Tue, 29 Feb 2000 23:59:59 GMT", "Mon, 31 Dec 2255 12:34:56 GMT"}) {
        std::optional<TimePoint> t = parse_rfc1123(text);
        ASSERT_TRUE(t) << text;
        EXPECT_EQ(format_rfc1123(*t), text);
        // The same second again (the cached text), then a second later.
        EXPECT_EQ(format_rfc1123(*t + std::chrono::milliseconds(999)), text);
        EXPECT_NE(format_rfc1123(*t + std::chrono::seconds(1)), text);
    }
}

// Dates that 64-bit nanoseconds cannot hold are the farthest ones they can, not wrapped around
// (a SAS expiring in 9999 had expired in 1816).
TEST(Timestamps, DatesPastWhatATimePointHoldsAreItsEnds) {
    EXPECT_EQ(parse_rfc1123("Fri, 31 Dec 9999 12:34:56 GMT"), TimePoint::max());
    EXPECT_EQ(parse_iso8601("9999-12-31T23:59:59Z"), TimePoint::max());
    EXPECT_EQ(parse_iso8601("1601-01-01T00:00:00Z"), TimePoint::min());
    EXPECT_GT(*parse_iso8601("2261-12-31T23:59:59Z"), now());
    // And they format without overflowing on the way (UBSan watches this).
    EXPECT_EQ(format_iso8601(TimePoint::min(), 7).substr(0, 10), "1677-09-21");
    EXPECT_EQ(format_iso8601(TimePoint::max(), 7).substr(0, 10), "2262-04-11");
    EXPECT_EQ(format_rfc1123(TimePoint::min()).substr(5, 11), "21 Sep 1677");
    EXPECT_EQ(parse_iso8601(format_iso8601(*parse_iso8601("2026-11-26T01:02:03.1234567Z"), 7)),
              parse_iso8601("2026-11-26T01:02:03.1234567Z"));
}

}  // namespace
}  // namespace bai::time
