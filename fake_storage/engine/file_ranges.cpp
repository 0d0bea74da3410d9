#include "fake_storage/engine/file_ranges.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <charconv>

#include "common/time/timestamps.h"

namespace bai::storage {
namespace {

// The change number of the last share snapshot (or of the start: what came before is older).
std::atomic<std::int64_t> snapshot_barrier{time::to_ticks(time::now())};

// A file written in many small pieces keeps at most this many change runs: past it, neighbours
// merge (the later number wins), so a diff may name a little more as changed, never less.
constexpr size_t kMaxChanges = 4096;

// Removes [start, end) from sorted disjoint runs, splitting a run that straddles it.
template <typename T, typename Start, typename End, typename Make>
void cut(std::vector<T>& runs, std::uint64_t start, std::uint64_t end, Start s, End e, Make make) {
    std::vector<T> out;
    out.reserve(runs.size() + 1);
    for (const T& r : runs) {
        if (e(r) <= start || s(r) >= end) {
            out.push_back(r);
            continue;
        }
        if (s(r) < start) out.push_back(make(r, s(r), start));
        if (e(r) > end) out.push_back(make(r, end, e(r)));
    }
    runs.swap(out);
}

}  // namespace

void FileRanges::mark(std::uint64_t start, std::uint64_t end, std::int64_t seq) {
    cut(changes_, start, end, [](const Change& c) { return c.start; }, [](const Change& c) { return c.end; },
        [](const Change& c, std::uint64_t s, std::uint64_t e) { return Change{s, e, c.seq}; });
    auto at = std::lower_bound(changes_.begin(), changes_.end(), start,
                               [](const Change& c, std::uint64_t v) { return c.start < v; });
    at = changes_.insert(at, Change{start, end, seq});
    // Touching changes made since the last snapshot are one: no diff can tell them apart.
    const std::int64_t barrier = snapshot_barrier.load();
    if (seq > barrier) {
        if (at + 1 != changes_.end() && (at + 1)->start == at->end && (at + 1)->seq > barrier) {
            at->end = (at + 1)->end;
            at->seq = std::max(at->seq, (at + 1)->seq);
            at = std::prev(changes_.erase(at + 1));
        }
        if (at != changes_.begin() && std::prev(at)->end == at->start && std::prev(at)->seq > barrier) {
            std::prev(at)->end = at->end;
            std::prev(at)->seq = std::max(std::prev(at)->seq, at->seq);
            changes_.erase(at);
        }
    }
    if (changes_.size() <= kMaxChanges) return;
    std::vector<Change> merged;
    merged.reserve(changes_.size() / 2 + 1);
    for (size_t i = 0; i < changes_.size(); i += 2) {
        Change c = changes_[i];
        if (i + 1 < changes_.size()) {
            c.end = changes_[i + 1].end;
            c.seq = std::max(c.seq, changes_[i + 1].seq);
        }
        merged.push_back(c);
    }
    changes_.swap(merged);
}

void FileRanges::write(std::uint64_t start, std::uint64_t end, std::int64_t seq) {
    if (start >= end) return;
    mark(start, end, seq);
    std::vector<Run> out;
    out.reserve(data_.size() + 1);
    Run joined{start, end};
    bool placed = false;
    for (const Run& r : data_) {
        if (r.second < joined.first) {
            out.push_back(r);
        } else if (r.first > joined.second) {
            if (!placed) out.push_back(joined), placed = true;
            out.push_back(r);
        } else {  // overlapping or adjacent: one range
            joined = {std::min(joined.first, r.first), std::max(joined.second, r.second)};
        }
    }
    if (!placed) out.push_back(joined);
    data_.swap(out);
}

void FileRanges::clear(std::uint64_t start, std::uint64_t end, std::int64_t seq) {
    if (start >= end) return;
    mark(start, end, seq);
    cut(data_, start, end, [](const Run& r) { return r.first; }, [](const Run& r) { return r.second; },
        [](const Run&, std::uint64_t s, std::uint64_t e) { return Run{s, e}; });
}

void FileRanges::truncate(std::uint64_t size) {
    const std::uint64_t all = ~std::uint64_t{0};
    cut(data_, size, all, [](const Run& r) { return r.first; }, [](const Run& r) { return r.second; },
        [](const Run&, std::uint64_t s, std::uint64_t e) { return Run{s, e}; });
    cut(changes_, size, all, [](const Change& c) { return c.start; }, [](const Change& c) { return c.end; },
        [](const Change& c, std::uint64_t s, std::uint64_t e) { return Change{s, e, c.seq}; });
}

std::int64_t FileRanges::last_change() const {
    std::int64_t last = 0;
    for (const Change& c : changes_) last = std::max(last, c.seq);
    return last;
}

std::vector<FileRanges::Listed> FileRanges::list(std::uint64_t first, std::uint64_t last) const {
    std::vector<Listed> out;
    for (const Run& r : data_) {
        if (r.second <= first || r.first > last) continue;
        out.push_back({std::max(r.first, first), std::min(r.second - 1, last), false});
    }
    return out;
}

std::vector<FileRanges::Listed> FileRanges::changed_since(std::int64_t since, std::uint64_t first,
                                                          std::uint64_t last) const {
    // The changed parts, joined where they touch, then split by what is written now.
    std::vector<Run> changed;
    for (const Change& c : changes_) {
        if (c.seq <= since || c.end <= first || c.start > last) continue;
        Run r{std::max(c.start, first), std::min(c.end, last + 1)};
        if (!changed.empty() && changed.back().second >= r.first) {
            changed.back().second = std::max(changed.back().second, r.second);
        } else {
            changed.push_back(r);
        }
    }
    std::vector<Listed> out;
    auto add = [&](std::uint64_t s, std::uint64_t e, bool cleared) {
        if (s >= e) return;
        if (!out.empty() && out.back().cleared == cleared && out.back().last + 1 == s) {
            out.back().last = e - 1;
        } else {
            out.push_back({s, e - 1, cleared});
        }
    };
    for (const Run& c : changed) {
        std::uint64_t at = c.first;
        for (const Run& d : data_) {
            if (d.second <= at || d.first >= c.second) continue;
            add(at, std::max(at, d.first), true);
            add(std::max(at, d.first), std::min(d.second, c.second), false);
            at = std::min(d.second, c.second);
        }
        add(at, c.second, true);
    }
    return out;
}

std::string FileRanges::to_text() const {
    std::string out;
    out.reserve(24 * (data_.size() + changes_.size()) + 1);
    for (size_t i = 0; i < data_.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(data_[i].first) + '-' + std::to_string(data_[i].second);
    }
    out += ';';
    for (size_t i = 0; i < changes_.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(changes_[i].start) + '-' + std::to_string(changes_[i].end) + '@' +
               std::to_string(changes_[i].seq);
    }
    return out;
}

namespace {

// Reads a number of `text` at `at` up to `stop` (or the end), moving `at` past both.
template <typename T>
bool read_number(std::string_view text, size_t& at, char stop, T& value) {
    const char* first = text.data() + at;
    const char* last = text.data() + text.size();
    auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc() || end == first) return false;
    at = static_cast<size_t>(end - text.data());
    if (stop == '\0') return at == text.size();
    if (at >= text.size() || text[at] != stop) return false;
    ++at;
    return true;
}

}  // namespace

std::optional<FileRanges> FileRanges::from_text(std::string_view text) {
    const size_t semi = text.find(';');
    if (semi == std::string_view::npos) return std::nullopt;
    const std::string_view data = text.substr(0, semi);
    const std::string_view changes = text.substr(semi + 1);
    FileRanges out;
    // START-END,... : sorted, disjoint, not touching.
    for (size_t at = 0; at < data.size();) {
        std::uint64_t s = 0, e = 0;
        const size_t comma = data.find(',', at);
        const std::string_view run = data.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
        size_t i = 0;
        if (!read_number(run, i, '-', s) || !read_number(run, i, '\0', e) || s >= e) return std::nullopt;
        if (!out.data_.empty() && s <= out.data_.back().second) return std::nullopt;
        out.data_.emplace_back(s, e);
        if (comma == std::string_view::npos) break;
        at = comma + 1;
        if (at == data.size()) return std::nullopt;
    }
    // START-END@SEQ,... : sorted, disjoint.
    for (size_t at = 0; at < changes.size();) {
        Change c;
        const size_t comma = changes.find(',', at);
        const std::string_view run =
            changes.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
        size_t i = 0;
        if (!read_number(run, i, '-', c.start) || !read_number(run, i, '@', c.end) || !read_number(run, i, '\0', c.seq) ||
            c.start >= c.end) {
            return std::nullopt;
        }
        if (!out.changes_.empty() && c.start < out.changes_.back().end) return std::nullopt;
        out.changes_.push_back(c);
        if (comma == std::string_view::npos) break;
        at = comma + 1;
        if (at == changes.size()) return std::nullopt;
    }
    return out;
}

void note_share_snapshot() {
    const std::int64_t now = next_file_change();
    std::int64_t seen = snapshot_barrier.load();
    while (seen < now && !snapshot_barrier.compare_exchange_weak(seen, now)) {
    }
}

std::int64_t next_file_change() {
    static std::atomic<std::int64_t> last{0};
    const std::int64_t now = time::to_ticks(time::now());
    std::int64_t seen = last.load();
    std::int64_t mine = 0;
    do {
        mine = std::max(now, seen + 1);
    } while (!last.compare_exchange_weak(seen, mine));
    return mine;
}

}  // namespace bai::storage
