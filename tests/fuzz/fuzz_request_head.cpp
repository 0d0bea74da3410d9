// libFuzzer: the lean listener's request head parser and chunk size lines.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/http/request_head.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    httplib::Request request;
    bai::http::BodyFraming framing;
    // As the listener hands it over: cut after the first blank line.
    size_t end = input.find("\r\n\r\n");
    std::string head(end == std::string_view::npos ? input : input.substr(0, end + 4));
    if (end == std::string_view::npos) head += "\r\n\r\n";
    if (!bai::http::parse_request_head(head, request, framing)) {
        (void)request.headers.size();
    }
    (void)bai::http::parse_chunk_size(input.substr(0, input.find("\r\n")));
    return 0;
}
