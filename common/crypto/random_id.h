#pragma once

#include <string>

namespace bai::crypto {

// `bytes` random bytes as lower-case hex.
std::string random_hex(size_t bytes);
// `bytes` bytes from the system's cryptographic generator, base64: secrets such as account keys.
std::string random_base64(size_t bytes);

// A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", unique but not secret.
std::string uuid4();

}  // namespace bai::crypto
