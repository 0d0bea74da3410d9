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

#include "common/crypto/digest.h"

namespace bai::crypto {
namespace {

std::string hex(const std::string& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

TEST(Digest, HmacSha256MatchesRfc4231AndReusesKeysCorrectly) {
    // RFC 4231 test case 2.
    const std::string expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")), expected);
    EXPECT_NE(hex(hmac_sha256("Jefe", "something else")), expected);
    EXPECT_EQ(hex(hmac_sha256("Jefe", "what do ya want for nothing?")), expected);  // cached key
    EXPECT_NE(hex(hmac_sha256("other", "what do ya want for nothing?")), expected);
}

TEST(Digest, Md5OfTheEmptyString) {
    EXPECT_EQ(hex(md5("")), "d41d8cd98f00b204e9800998ecf8427e");
}

TEST(Digest, SameSecretComparesBytesAndLengths) {
    EXPECT_TRUE(same_secret("Secret-Pass1", "Secret-Pass1"));
    EXPECT_TRUE(same_secret("", ""));
    EXPECT_FALSE(same_secret("Secret-Pass1", "Secret-Pass2"));
    EXPECT_FALSE(same_secret("Secret-Pass", "Secret-Pass1"));
    EXPECT_FALSE(same_secret("Secret-Pass1x", "Secret-Pass1"));
    EXPECT_FALSE(same_secret(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

}  // namespace
}  // namespace bai::crypto
