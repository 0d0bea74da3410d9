#include "emulator/batch/node_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "common/time/timestamps.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/batch_http.h"
#include "emulator/engine/writable_root.h"
#include "fake_storage/engine/share_paths.h"
#include "fuse_mounts/manager/mount_table.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

BatchError file_not_found() { return BatchError(404, "FileNotFound", "The specified file does not exist."); }

// `relative` under `root`, or nullopt when it leads out of it: through `..` or through a symbolic
// link (a task may make `wd/x -> /`); the comparison is on canonical paths.
std::optional<fs::path> resolve_under(const fs::path& root, const std::string& relative) {
    if (root.empty() || relative.find('\0') != std::string::npos) return std::nullopt;
    std::error_code ec;
    const fs::path base = fs::weakly_canonical(root, ec);
    if (ec) return std::nullopt;
    const fs::path file = fs::weakly_canonical(root / relative, ec);
    if (ec) return std::nullopt;
    if (file == base) return file;
    const std::string prefix = base.string() + "/";
    if (file.string().rfind(prefix, 0) != 0) return std::nullopt;
    return file;
}

struct FileFacts {
    bool directory = false;
    std::uintmax_t size = 0;
    time::TimePoint modified;
    std::string mode;  // "0o100644"
};

std::optional<FileFacts> facts_of(const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return std::nullopt;
    FileFacts facts;
    facts.directory = S_ISDIR(st.st_mode);
    facts.size = facts.directory ? 0 : static_cast<std::uintmax_t>(st.st_size);
    auto at = [](const timespec& ts) {
        return time::TimePoint(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
    };
    facts.modified = at(st.st_mtim);
    char mode[16];
    std::snprintf(mode, sizeof mode, "0o%o", static_cast<unsigned>(st.st_mode));
    facts.mode = mode;
    return facts;
}

// The service's content types: text for a task's logs and text files, bytes otherwise.
std::string content_type_of(const fs::path& file) {
    const std::string ext = file.extension().string();
    return ext == ".txt" || ext == ".log" ? "text/plain" : "application/octet-stream";
}

// A file's properties in a list (the service shows none for a directory, and no creationTime on
// Linux nodes); contentLength is an Int64, which OData's JSON writes as a string.
json properties_of(const fs::path& file, const FileFacts& facts) {
    return {{"lastModified", time::format_iso8601(facts.modified)},
            {"contentLength", std::to_string(facts.size)},
            {"contentType", content_type_of(file)},
            {"fileMode", facts.mode}};
}

// What `$filter` keeps: startswith(name,'P') or name eq 'N'; BatchError 400 for anything else.
std::function<bool(const std::string&)> name_filter(const std::string& filter) {
    if (filter.empty()) return [](const std::string&) { return true; };
    std::string text;
    for (char c : filter) {
        if (c != ' ') text += c;
    }
    auto quoted = [&](size_t from, size_t until) -> std::optional<std::string> {
        if (until <= from + 1 || text[from] != '\'' || text[until - 1] != '\'') return std::nullopt;
        return text.substr(from + 1, until - from - 2);
    };
    const std::string starts = "startswith(name,";
    if (text.rfind(starts, 0) == 0 && text.back() == ')') {
        if (std::optional<std::string> prefix = quoted(starts.size(), text.size() - 1)) {
            return [p = *prefix](const std::string& name) { return name.rfind(p, 0) == 0; };
        }
    }
    if (text.rfind("nameeq", 0) == 0) {
        if (std::optional<std::string> exact = quoted(6, text.size())) {
            return [e = *exact](const std::string& name) { return name == e; };
        }
    }
    throw BatchError(400, "InvalidQueryParameterValue", "The value for one of the query parameters specified in the request URI is invalid.",
                     {{"QueryParameterName", "$filter"}, {"QueryParameterValue", filter},
                      {"Reason", "The emulator filters files by startswith(name,'prefix') or name eq 'name'"}});
}

}  // namespace

void send_file_under(const httplib::Request& req, httplib::Response& res, const fs::path& root, const std::string& relative,
                     const std::string& url) {
    std::optional<fs::path> file = resolve_under(root, relative);
    std::optional<FileFacts> facts = file ? facts_of(*file) : std::nullopt;
    if (!facts || (facts->directory && req.method != "HEAD")) throw file_not_found();
    res.set_header("ocp-batch-file-isdirectory", facts->directory ? "True" : "False");
    res.set_header("ocp-batch-file-url", url);
    res.set_header("ocp-batch-file-mode", facts->mode);
    res.set_header("Last-Modified", time::format_rfc1123(facts->modified));
    if (facts->directory) {
        res.set_content("", "application/octet-stream");
        return;
    }
    // If-Modified-Since and If-Unmodified-Since, to the second (the service's file operations
    // take them): 304 without a body, 412 ConditionNotMet.
    const time::TimePoint changed = std::chrono::floor<std::chrono::seconds>(facts->modified);
    if (std::optional<time::TimePoint> since = time::parse_rfc1123(req.get_header_value("If-Modified-Since")); since && changed <= *since) {
        res.status = 304;
        return;
    }
    if (std::optional<time::TimePoint> since = time::parse_rfc1123(req.get_header_value("If-Unmodified-Since")); since && changed > *since) {
        throw BatchError(412, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.");
    }
    // Read through a descriptor opened beneath the root with no symbolic link followed on the way
    // (openat2): the checks above looked at a path, and a task may swap one of its directories for
    // a link to elsewhere between that look and this read.
    storage::ShareFd fd = storage::open_regular_in_share(root, relative, O_RDONLY | O_NONBLOCK);
    if (!fd) throw file_not_found();
    std::string bytes;
    char buffer[65536];
    for (ssize_t n; (n = ::read(fd.get(), buffer, sizeof buffer)) > 0;) bytes.append(buffer, static_cast<size_t>(n));
    // ocp-range: bytes=START-END (END inclusive, or to the end): that part, answered 200 as the
    // service's swagger has it.
    if (req.has_header("ocp-range")) {
        const std::string range = req.get_header_value("ocp-range");
        unsigned long long start = 0, end = 0;
        char dash = 0;
        int used = 0;
        const bool open_ended = std::sscanf(range.c_str(), "bytes=%llu%c%n", &start, &dash, &used) == 2 && dash == '-' &&
                                static_cast<size_t>(used) == range.size();
        const bool closed = !open_ended && std::sscanf(range.c_str(), "bytes=%llu-%llu%n", &start, &end, &used) == 2 &&
                            static_cast<size_t>(used) == range.size() && start <= end;
        if (!open_ended && !closed) {
            throw BatchError(400, "InvalidHeaderValue", "The value for one of the HTTP headers is not in the correct format.",
                             {{"HeaderName", "ocp-range"}, {"HeaderValue", range}});
        }
        if (start >= bytes.size() && !bytes.empty()) {
            throw BatchError(416, "InvalidRange", "The range specified is invalid for the current size of the resource.",
                             {{"HeaderName", "ocp-range"}});
        }
        const size_t from = std::min<size_t>(start, bytes.size());
        const size_t count = open_ended ? std::string::npos : static_cast<size_t>(end - start + 1);
        bytes = bytes.substr(from, count);
    }
    res.set_content(bytes, content_type_of(*file));
}

void delete_file_under(const httplib::Request& req, const fs::path& root, const std::string& relative) {
    std::optional<fs::path> file = resolve_under(root, relative);
    std::optional<FileFacts> facts = file ? facts_of(*file) : std::nullopt;
    std::error_code same;
    if (!facts || fs::equivalent(*file, root, same)) throw file_not_found();  // never the root itself
    std::error_code ec;
    if (facts->directory && req.get_param_value("recursive") != "true" && !fs::is_empty(*file, ec)) {
        throw BatchError(409, "DirectoryNotEmpty", "The directory is not empty: delete it with recursive=true.",
                         {{"PropertyName", "recursive"}});
    }
    // Removed through descriptors opened beneath the root with no link followed (share_paths.h):
    // the checks above looked at paths, and a task may swap a directory for a link meanwhile.
    if (!mounts::release_mounts_under(*file).empty()) {
        throw BatchError(500, "InternalServerError", "The file could not be deleted: something is still mounted under it");
    }
    if (!storage::remove_tree_in_share(root, relative)) {
        if (errno == ELOOP || errno == EXDEV || errno == ENOENT || errno == ENOTDIR) throw file_not_found();
        throw BatchError(500, "InternalServerError", std::string("The file could not be deleted: ") + std::strerror(errno));
    }
}

void send_file_list(const httplib::Request& req, httplib::Response& res, const fs::path& root, const std::string& files_url,
                    const std::string& metadata) {
    const bool recursive = req.get_param_value("recursive") == "true";
    auto keep = name_filter(req.get_param_value("$filter"));
    json entries = json::array();
    std::error_code ec;
    if (!root.empty() && fs::is_directory(root, ec)) {
        std::vector<std::string> names;
        if (recursive) {
            for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
                names.push_back(it->path().lexically_relative(root).generic_string());
            }
        } else {
            for (const auto& entry : fs::directory_iterator(root, ec)) names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        for (const std::string& name : names) {
            std::optional<FileFacts> facts = facts_of(root / name);
            if (!facts || !keep(name)) continue;
            json entry{{"name", name}, {"url", files_url + "/" + name}, {"isDirectory", facts->directory}};
            if (!facts->directory) entry["properties"] = properties_of(root / name, *facts);
            entries.push_back(std::move(entry));
        }
    }
    const Page asked = page_of(req);
    const int limit = asked.limit;
    const std::int64_t after = skip_count(req, asked);
    json page = json::array();
    for (size_t i = static_cast<size_t>(std::min<std::int64_t>(after, static_cast<std::int64_t>(entries.size())));
         i < entries.size() && page.size() < static_cast<size_t>(limit); ++i) {
        page.push_back(entries[i]);
    }
    json out{{"odata.metadata", metadata}, {"value", page}};
    const std::int64_t next = after + static_cast<std::int64_t>(page.size());
    if (next < static_cast<std::int64_t>(entries.size())) out["odata.nextLink"] = next_link(req, files_url, limit, std::to_string(next));
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

}  // namespace bai::batch
