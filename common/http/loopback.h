// Whether a host name is this machine's loopback: the emulator serves and reaches nothing else.
#pragma once

#include <string>

namespace bai::http {

// 127.0.0.0/8, ::1 or localhost.
bool is_loopback_host(const std::string& host);

}  // namespace bai::http
