// libFuzzer: request bodies of the Blob service beyond block lists and service properties: a Blob
// Batch body (multipart/mixed) and the stored access policies of Set Container ACL.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fake_storage/blob/blob_batch.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/container_acl_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    using namespace bai::storage;
    try {
        if (data[0] % 2 == 0) {
            // The body's first line is the Content-Type, the rest the body.
            const size_t eol = input.find('\n');
            const std::string content_type(input.substr(0, eol == std::string_view::npos ? input.size() : eol));
            const std::string_view body = eol == std::string_view::npos ? std::string_view() : input.substr(eol + 1);
            for (const std::string container : {"", "c"}) {
                for (const BatchPart& part : parse_batch(body, content_type, "devstoreaccount1", container)) {
                    if (!part.request.target.starts_with("/devstoreaccount1")) __builtin_trap();
                }
            }
        } else {
            auto identifiers = parse_signed_identifiers(input);
            if (identifiers.size() > kMaxSignedIdentifiers) __builtin_trap();
            if (parse_signed_identifiers(signed_identifiers_xml(identifiers)).size() != identifiers.size()) __builtin_trap();
        }
    } catch (const StorageError&) {
    }
    return 0;
}
