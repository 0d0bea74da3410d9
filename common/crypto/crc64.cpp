#include "common/crypto/crc64.h"

#include <array>
#include <cstring>

namespace bai::crypto {
namespace {

constexpr std::uint64_t kPolynomial = 0x9A6C9329AC4BC9B5ull;

// Slicing by eight: table[k][b] is the CRC of byte b followed by k zero bytes.
using Tables = std::array<std::array<std::uint64_t, 256>, 8>;

constexpr Tables make_tables() {
    Tables t{};
    for (std::uint64_t b = 0; b < 256; ++b) {
        std::uint64_t crc = b;
        for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kPolynomial : crc >> 1;
        t[0][b] = crc;
    }
    for (size_t k = 1; k < 8; ++k) {
        for (size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
    }
    return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

void Crc64::update(std::string_view bytes) {
    std::uint64_t crc = state_;
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    size_t n = bytes.size();
    while (n >= 8) {
        std::uint64_t word = 0;
        for (int i = 7; i >= 0; --i) word = (word << 8) | p[i];  // little-endian load
        crc ^= word;
        crc = kTables[7][crc & 0xFF] ^ kTables[6][(crc >> 8) & 0xFF] ^ kTables[5][(crc >> 16) & 0xFF] ^
              kTables[4][(crc >> 24) & 0xFF] ^ kTables[3][(crc >> 32) & 0xFF] ^ kTables[2][(crc >> 40) & 0xFF] ^
              kTables[1][(crc >> 48) & 0xFF] ^ kTables[0][crc >> 56];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    state_ = crc;
}

std::string Crc64::bytes() const {
    std::string out(8, '\0');
    std::uint64_t v = value();
    for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    return out;
}

std::string crc64(std::string_view bytes) {
    Crc64 c;
    c.update(bytes);
    return c.bytes();
}

}  // namespace bai::crypto
