// A file's written ranges, as Get Ranges lists them, and when each part of the file last changed,
// for Get Ranges with prevsharesnapshot. Kept with the file's row (share_entries.ranges) as text
// ("START-END,...;START-END@CHANGE,...", read back on every write, so kept plain); a file written
// through a mount has none ("": unknown), and its bytes on disk say instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bai::storage {

class FileRanges {
public:
    // [start, end): bytes, the end excluded.
    using Run = std::pair<std::uint64_t, std::uint64_t>;
    struct Change {
        std::uint64_t start = 0;
        std::uint64_t end = 0;
        std::int64_t seq = 0;  // next_file_change(): later changes have larger numbers
    };
    // A range of Get Ranges' answer, its ends included; `cleared` for a ClearRange of a diff.
    struct Listed {
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        bool cleared = false;
        bool operator==(const Listed&) const = default;
    };

    // Put Range (and the bytes of a copy): written now. Adjacent and overlapping writes make one
    // range, as the service lists a page blob's pages.
    void write(std::uint64_t start, std::uint64_t end, std::int64_t seq);
    // Clear Range: no longer written.
    void clear(std::uint64_t start, std::uint64_t end, std::int64_t seq);
    // A resize: nothing at or past `size` stays written.
    void truncate(std::uint64_t size);
    // The number of the last change (0 for none).
    std::int64_t last_change() const;
    const std::vector<Run>& written() const { return data_; }

    // The written ranges that meet [first, last].
    std::vector<Listed> list(std::uint64_t first, std::uint64_t last) const;
    // What changed after change `since` within [first, last]: each changed part as a range where
    // it is written now, else as cleared (a part written and cleared since is cleared, as the
    // service lists it).
    std::vector<Listed> changed_since(std::int64_t since, std::uint64_t first, std::uint64_t last) const;

    std::string to_text() const;
    // nullopt for "" (unknown) and for text that is not what to_text writes.
    static std::optional<FileRanges> from_text(std::string_view text);

private:
    std::vector<Run> data_;        // sorted, disjoint, not adjacent
    std::vector<Change> changes_;  // sorted, disjoint
    void mark(std::uint64_t start, std::uint64_t end, std::int64_t seq);
};

// A number for a change made now: larger than every one given before (100 ns ticks of the clock,
// one more than the last where the clock has not moved), so later changes compare later across a
// restart too.
std::int64_t next_file_change();
// A share snapshot is being taken: changes made after it are kept apart from those before. Between
// two snapshots a diff cannot tell changes apart, so touching changes made since the last one (or
// since the emulator started) are kept as one: a file written in many pieces keeps one change.
void note_share_snapshot();

}  // namespace bai::storage
