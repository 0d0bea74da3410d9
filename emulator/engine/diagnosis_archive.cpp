#include "emulator/engine/diagnosis_archive.h"

#include <array>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <mutex>
#include <unordered_map>
#include <stdexcept>
#include <vector>

#include <zlib.h>

#include "common/crypto/digest.h"

namespace bai::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxEntryBytes = 64 * 1024;

std::uint32_t crc32_of(const std::string& bytes) {
    return static_cast<std::uint32_t>(::crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

void put16(std::string& out, std::uint16_t v) {
    out += static_cast<char>(v & 0xFF);
    out += static_cast<char>(v >> 8);
}

void put32(std::string& out, std::uint32_t v) {
    put16(out, static_cast<std::uint16_t>(v & 0xFFFF));
    put16(out, static_cast<std::uint16_t>(v >> 16));
}

// The file's last kMaxEntryBytes.
std::string tail_of(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff skip = size > static_cast<std::streamoff>(kMaxEntryBytes) ? size - static_cast<std::streamoff>(kMaxEntryBytes) : 0;
    in.seekg(skip);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Entry {
    std::string name;
    std::string data;
    std::uint32_t crc;
    std::uint32_t offset;
};

}  // namespace

std::string diagnosis_archive_name(const std::string& pool) {
    // Every job of a cluster ends with one: the name is made once per cluster.
    static std::mutex mutex;
    static std::unordered_map<std::string, std::string> names;
    std::lock_guard lock(mutex);
    if (auto it = names.find(pool); it != names.end()) return it->second;
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : crypto::hmac_sha256("tvmps", pool)) {
        hex += kHex[c >> 4];
        hex += kHex[c & 0xF];
    }
    return names.emplace(pool, "diagnosis-tvmps_" + hex + "_d.zip").first->second;
}

fs::path write_diagnosis_archive(const fs::path& directory, const std::string& pool) {
    std::vector<Entry> entries;
    std::error_code ec;
    for (const fs::directory_entry& file : fs::directory_iterator(directory, ec)) {
        const std::string name = file.path().filename().string();
        if (!file.is_regular_file(ec) || file.path().extension() == ".zip") continue;
        entries.push_back({name, tail_of(file.path()), 0, 0});
    }
    // MS-DOS time and date of the entries: now, in UTC.
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    const auto dos_time = static_cast<std::uint16_t>((utc.tm_hour << 11) | (utc.tm_min << 5) | (utc.tm_sec / 2));
    const auto dos_date = static_cast<std::uint16_t>(((utc.tm_year - 80) << 9) | ((utc.tm_mon + 1) << 5) | utc.tm_mday);

    std::string zip;
    auto header = [&](std::string& out, const Entry& e) {
        put16(out, 10);  // version needed: 1.0, stored entries
        put16(out, 0);   // flags
        put16(out, 0);   // method: stored
        put16(out, dos_time);
        put16(out, dos_date);
        put32(out, e.crc);
        put32(out, static_cast<std::uint32_t>(e.data.size()));
        put32(out, static_cast<std::uint32_t>(e.data.size()));
        put16(out, static_cast<std::uint16_t>(e.name.size()));
        put16(out, 0);  // extra field length
    };
    for (Entry& e : entries) {
        e.crc = crc32_of(e.data);
        e.offset = static_cast<std::uint32_t>(zip.size());
        put32(zip, 0x04034b50);
        header(zip, e);
        zip += e.name;
        zip += e.data;
    }
    const auto directory_offset = static_cast<std::uint32_t>(zip.size());
    for (const Entry& e : entries) {
        put32(zip, 0x02014b50);
        put16(zip, 20);  // made by: MS-DOS attributes, 2.0
        header(zip, e);
        put16(zip, 0);  // comment length
        put16(zip, 0);  // disk number
        put16(zip, 0);  // internal attributes
        put32(zip, 0);  // external attributes
        put32(zip, e.offset);
        zip += e.name;
    }
    const auto directory_size = static_cast<std::uint32_t>(zip.size()) - directory_offset;
    put32(zip, 0x06054b50);
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, static_cast<std::uint16_t>(entries.size()));
    put16(zip, static_cast<std::uint16_t>(entries.size()));
    put32(zip, directory_size);
    put32(zip, directory_offset);
    put16(zip, 0);  // comment length

    const fs::path path = directory / diagnosis_archive_name(pool);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << zip;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path.string());
    return path;
}

}  // namespace bai::engine
