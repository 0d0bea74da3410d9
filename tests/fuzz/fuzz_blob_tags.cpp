// libFuzzer: blob index tags (the x-ms-tags header, the Set Blob Tags XML and what it writes back)
// and the two tag expression languages (Find Blobs' where, x-ms-if-tags) with their evaluation.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fake_storage/engine/blob_tags.h"
#include "fake_storage/engine/storage_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    using namespace bai::storage;
    const Tags sample{{"tag1", "val1"}, {"Key With Space", "x"}, {"n", "20"}};
    try {
        switch (data[0] % 4) {
            case 0: {
                Tags tags = parse_tags_header(input);
                if (parse_tags_xml(tags_xml(tags)) != tags) __builtin_trap();
                break;
            }
            case 1: {
                Tags tags = parse_tags_xml(input);
                if (parse_tags_xml(tags_xml(tags)) != tags) __builtin_trap();
                if (tags_from_json(tags_to_json(tags)) != tags) __builtin_trap();
                break;
            }
            case 2: {
                TagExpression where = TagExpression::parse(input, TagExpression::Use::find);
                Tags named = where.named(sample);
                for (const auto& [key, value] : named) {
                    if (sample.at(key) != value) __builtin_trap();
                }
                (void)where.matches(sample, "container");
                break;
            }
            default: {
                TagExpression condition = TagExpression::parse(input, TagExpression::Use::condition);
                (void)condition.matches(sample);
                (void)condition.matches({});
                break;
            }
        }
    } catch (const StorageError&) {
    }
    return 0;
}
