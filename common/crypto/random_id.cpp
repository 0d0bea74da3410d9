#include "common/crypto/random_id.h"

#include <openssl/rand.h>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace bai::crypto {
namespace {

std::vector<unsigned char> random_bytes(size_t n) {
    std::vector<unsigned char> bytes(n);
    if (RAND_bytes(bytes.data(), static_cast<int>(n)) != 1) {
        throw std::runtime_error("RAND_bytes failed");
    }
    return bytes;
}

std::string to_hex(const std::vector<unsigned char>& bytes) {
    return hex_of(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace

std::string random_hex(size_t bytes) { return to_hex(random_bytes(bytes)); }

std::string random_base64(size_t bytes) {
    std::vector<unsigned char> raw = random_bytes(bytes);
    return base64_encode(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

std::string uuid4() {
    // Request and operation ids need to be unique, not secret: a per-thread generator seeded from
    // the system's randomness is enough, and far cheaper than RAND_bytes per id.
    thread_local std::mt19937_64 generator = [] {
        auto seed = random_bytes(8);
        std::uint64_t value = 0;
        for (unsigned char c : seed) value = (value << 8) | c;
        return std::mt19937_64(value);
    }();
    std::vector<unsigned char> b(16);
    for (int half = 0; half < 2; ++half) {
        std::uint64_t value = generator();
        for (int i = 0; i < 8; ++i) b[half * 8 + i] = static_cast<unsigned char>(value >> (8 * i));
    }
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);
    std::string hex = to_hex(b);
    return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
           hex.substr(16, 4) + "-" + hex.substr(20);
}

}  // namespace bai::crypto
