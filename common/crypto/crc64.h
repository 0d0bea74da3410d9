// CRC-64/NVME, the checksum Azure Storage calls CRC64 (x-ms-content-crc64): reflected polynomial
// 0x9A6C9329AC4BC9B5, initial value and final XOR all ones; written as 8 bytes, least
// significant first (base64 on the wire).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bai::crypto {

class Crc64 {
public:
    void update(std::string_view bytes);
    std::uint64_t value() const { return ~state_; }
    // The 8 bytes of the checksum, least significant first.
    std::string bytes() const;

private:
    std::uint64_t state_ = ~std::uint64_t{0};
};

std::string crc64(std::string_view bytes);

}  // namespace bai::crypto
