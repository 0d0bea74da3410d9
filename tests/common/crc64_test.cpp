#include "common/crypto/crc64.h"

#include <gtest/gtest.h>

#include <string>

namespace bai::crypto {
namespace {

// CRC-64/NVME's check value (the CRC of "123456789") from the catalogue of parametrised CRCs.
TEST(Crc64, MatchesTheNvmeCheckValue) {
    Crc64 c;
    c.update("123456789");
    EXPECT_EQ(c.value(), 0xAE8B14860A799888ull);
    EXPECT_EQ(crc64(""), std::string(8, '\0'));
}

TEST(Crc64, WritesTheLeastSignificantByteFirst) {
    const std::string b = crc64("123456789");
    ASSERT_EQ(b.size(), 8u);
    EXPECT_EQ(static_cast<unsigned char>(b[0]), 0x88);
    EXPECT_EQ(static_cast<unsigned char>(b[7]), 0xAE);
}

// The eight-byte path and the byte-at-a-time path agree, whatever the pieces.
TEST(Crc64, PiecesGiveTheSameChecksumAsTheWhole) {
    std::string data;
    for (int i = 0; i < 1000; ++i) data += static_cast<char>((i * 131 + 7) & 0xFF);
    const std::string whole = crc64(data);
    for (size_t piece : {1u, 3u, 7u, 8u, 9u, 64u, 999u}) {
        Crc64 c;
        for (size_t at = 0; at < data.size(); at += piece) c.update(std::string_view(data).substr(at, piece));
        EXPECT_EQ(c.bytes(), whole) << piece;
    }
}

}  // namespace
}  // namespace bai::crypto
