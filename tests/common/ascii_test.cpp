#include "common/text/ascii.h"

#include <gtest/gtest.h>

namespace bai::text {
namespace {

TEST(Ascii, SplitListTrimsAndDropsEmptyItems) {
    EXPECT_EQ(split_list(" GET, PUT ,,x-ms-meta-* "), (std::vector<std::string>{"GET", "PUT", "x-ms-meta-*"}));
    EXPECT_TRUE(split_list("").empty());
    EXPECT_TRUE(split_list(" , ,\t").empty());
    EXPECT_EQ(split_list("a;b", ';'), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(split_list("a;b"), (std::vector<std::string>{"a;b"}));
}

TEST(Ascii, TrimAndCase) {
    EXPECT_EQ(trim("\t a b  "), "a b");
    EXPECT_TRUE(iequals("Origin", "oRIGIN"));
    EXPECT_EQ(lower("Vary"), "vary");
}

}  // namespace
}  // namespace bai::text
