// libFuzzer: the File service's SDDL check and permission keys, and a file's written ranges
// (file_ranges.h: their text as read back from state.db, and the writes, clears and resizes that
// change them, checked against a byte map).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fake_storage/engine/file_ranges.h"
#include "fake_storage/file/file_permissions.h"

namespace {

using bai::storage::FileRanges;

// The runs of a byte map, as FileRanges lists them (ends included).
std::vector<FileRanges::Listed> runs(const std::vector<bool>& bytes) {
    std::vector<FileRanges::Listed> out;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (!bytes[i]) continue;
        if (!out.empty() && out.back().last + 1 == i) {
            out.back().last = i;
        } else {
            out.push_back({i, i, false});
        }
    }
    return out;
}

void check_operations(std::string_view input) {
    constexpr std::size_t kSpan = 4096;
    FileRanges ranges;
    std::vector<bool> written(kSpan, false);
    std::vector<std::int64_t> changed(kSpan, 0);
    std::int64_t seq = 0;
    std::uint64_t size = kSpan;
    for (std::size_t at = 0; at + 5 <= input.size(); at += 5) {
        const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(input[at + i]); };
        const std::uint64_t start = (byte(1) << 8 | byte(2)) % kSpan;
        const std::uint64_t end = std::min<std::uint64_t>(kSpan, start + (byte(3) << 8 | byte(4)) % 1024);
        ++seq;
        switch (byte(0) % 3) {
            case 0:
                ranges.write(start, end, seq);
                for (auto i = start; i < end; ++i) written[i] = true, changed[i] = seq;
                break;
            case 1:
                ranges.clear(start, end, seq);
                for (auto i = start; i < end; ++i) written[i] = false, changed[i] = seq;
                break;
            default:
                ranges.truncate(start);
                size = std::min(size, start);
                for (auto i = start; i < kSpan; ++i) written[i] = false, changed[i] = 0;
                break;
        }
    }
    if (ranges.list(0, kSpan - 1) != runs(written)) __builtin_trap();
    // What changed after a point: the bytes changed since, split by what is written now.
    const std::int64_t since = seq / 2;
    for (const FileRanges::Listed& r : ranges.changed_since(since, 0, kSpan - 1)) {
        for (auto i = r.first; i <= r.last; ++i) {
            if (changed[i] <= since || written[i] == r.cleared) __builtin_trap();
        }
    }
    auto again = FileRanges::from_text(ranges.to_text());
    if (!again || again->list(0, kSpan - 1) != ranges.list(0, kSpan - 1) || again->last_change() != ranges.last_change()) {
        __builtin_trap();
    }
    (void)size;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    using namespace bai::storage;
    switch (data[0] % 3) {
        case 0:
            if (is_valid_sddl(input) && !is_permission_key(permission_key_for(input))) __builtin_trap();
            (void)is_permission_key(input);
            break;
        case 1:
            if (auto ranges = FileRanges::from_text(std::string(input))) {
                (void)ranges->list(0, ~std::uint64_t{0});
                (void)ranges->changed_since(0, 0, ~std::uint64_t{0});
                ranges->write(0, 512, ranges->last_change() + 1);
                ranges->truncate(100);
                if (!FileRanges::from_text(ranges->to_text())) __builtin_trap();
            }
            break;
        default:
            check_operations(input);
            break;
    }
    return 0;
}
