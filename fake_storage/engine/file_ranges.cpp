#include "fake_storage/engine/file_ranges.h"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>

#include "common/time/timestamps.h"

namespace bai::storage {
namespace {

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
    changes_.insert(at, Change{start, end, seq});
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

std::string FileRanges::to_json() const {
    nlohmann::json d = nlohmann::json::array();
    for (const Run& r : data_) d.push_back({r.first, r.second});
    nlohmann::json c = nlohmann::json::array();
    for (const Change& x : changes_) c.push_back({x.start, x.end, x.seq});
    return nlohmann::json{{"d", d}, {"c", c}}.dump();
}

std::optional<FileRanges> FileRanges::from_json(const std::string& text) {
    if (text.empty()) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("d") || !j["d"].is_array() || !j.contains("c") || !j["c"].is_array()) {
        return std::nullopt;
    }
    FileRanges out;
    std::uint64_t previous = 0;
    for (const nlohmann::json& r : j["d"]) {
        if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned()) return std::nullopt;
        const auto s = r[0].get<std::uint64_t>(), e = r[1].get<std::uint64_t>();
        if (s >= e || (!out.data_.empty() && s <= previous)) return std::nullopt;
        out.data_.emplace_back(s, e);
        previous = e;
    }
    previous = 0;
    for (const nlohmann::json& r : j["c"]) {
        if (!r.is_array() || r.size() != 3 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned() ||
            !r[2].is_number_integer()) {
            return std::nullopt;
        }
        const auto s = r[0].get<std::uint64_t>(), e = r[1].get<std::uint64_t>();
        if (s >= e || (!out.changes_.empty() && s < previous)) return std::nullopt;
        out.changes_.push_back({s, e, r[2].get<std::int64_t>()});
        previous = e;
    }
    return out;
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
