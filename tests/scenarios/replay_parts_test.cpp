// The replay's comparisons and its trace's time format.
#include <gtest/gtest.h>

#include "scenarios/replay/expectation.h"
#include "scenarios/replay/trace_log.h"

namespace bai::scenarios {
namespace {

using nlohmann::json;

TEST(Expectation, ComparisonsOfValuesThatMayBeAbsent) {
    EXPECT_TRUE(holds(json("succeeded"), {"==", "succeeded"}));
    EXPECT_FALSE(holds(json("failed"), {"==", "succeeded"}));
    EXPECT_TRUE(holds(json(3), {"!=", 4}));
    EXPECT_TRUE(holds(json(3), {"<", 4}));
    EXPECT_TRUE(holds(json(4), {"<=", 4.0}));
    EXPECT_FALSE(holds(json(5), {"<=", 4}));
    EXPECT_TRUE(holds(json("b"), {">", "a"}));
    EXPECT_FALSE(holds(json("5"), {">", 4}));  // a string is not ordered against a number
    EXPECT_TRUE(holds(json("epoch 1\nepoch 2\n"), {"contains", "epoch 2"}));
    EXPECT_TRUE(holds(json({1, 2}), {"contains", 2}));
    EXPECT_TRUE(holds(json({{"code", 1}}), {"contains", "code"}));
    EXPECT_FALSE(holds(json(12), {"contains", 1}));
    EXPECT_TRUE(holds(json(nullptr), {"exists", nullptr}));  // null is a value
    EXPECT_FALSE(holds(std::nullopt, {"exists", nullptr}));
    EXPECT_TRUE(holds(std::nullopt, {"absent", nullptr}));
    EXPECT_FALSE(holds(std::nullopt, {"==", nullptr}));
    EXPECT_FALSE(holds(std::nullopt, {"!=", 1}));
}

TEST(Expectation, Descriptions) {
    EXPECT_EQ(describe(Comparison{"==", "x"}), "== \"x\"");
    EXPECT_EQ(describe(Comparison{"absent", nullptr}), "absent");
    EXPECT_EQ(describe(std::optional<json>()), "absent");
    EXPECT_EQ(describe(std::optional<json>(json(std::string(1000, 'a')))).size(), 403u);
}

TEST(TraceLog, OffsetsAsDaysHoursMinutesSecondsMilliseconds) {
    using namespace std::chrono;
    EXPECT_EQ(TraceLog::format_offset(nanoseconds(0)), "0d00:00:00.000");
    EXPECT_EQ(TraceLog::format_offset(hours(26) + minutes(3) + seconds(4) + milliseconds(5)), "1d02:03:04.005");
    EXPECT_EQ(TraceLog::format_offset(hours(24 * 7 + 12)), "7d12:00:00.000");
}

}  // namespace
}  // namespace bai::scenarios
