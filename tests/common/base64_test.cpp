#include "common/crypto/base64.h"

#include <gtest/gtest.h>

namespace bai::crypto {
namespace {

TEST(Base64, RoundTripsEveryPaddingLength) {
    for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
        auto decoded = base64_decode(base64_encode(s));
        ASSERT_TRUE(decoded.has_value()) << s;
        EXPECT_EQ(*decoded, s);
    }
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
}

TEST(Base64, KeepsBinaryBytes) {
    std::string bytes("\x00\xff\x10\x80", 4);
    EXPECT_EQ(*base64_decode(base64_encode(bytes)), bytes);
}

TEST(Base64, RefusesWhatIsNotStrictBase64) {
    EXPECT_FALSE(base64_decode("abc").has_value());       // length
    EXPECT_FALSE(base64_decode("ab!d").has_value());      // alphabet
    EXPECT_FALSE(base64_decode("a=bc").has_value());      // padding inside
    EXPECT_FALSE(base64_decode("ab c").has_value());      // whitespace
    EXPECT_FALSE(base64_decode("a===").has_value());      // too much padding
}

}  // namespace
}  // namespace bai::crypto
