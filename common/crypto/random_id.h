#pragma once

#include <string>

namespace bai::crypto {

// `bytes` random bytes as lower-case hex.
std::string random_hex(size_t bytes);
// A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", unique but not secret.
std::string uuid4();

}  // namespace bai::crypto
