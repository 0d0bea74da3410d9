#include "emulator/batch/task_files.h"

#include <fnmatch.h>
#include <httplib.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "common/http/loopback.h"
#include "common/text/ascii.h"
#include "common/text/percent_encoding.h"
#include "fake_storage/http/storage_request.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Url {
    std::string base;   // scheme://host:port
    std::string path;   // /account/container[/blob]
    std::string query;  // without '?'
};

std::mutex local_blob_mutex;
std::string local_blob_endpoint;  // http://127.0.0.1:P, once the emulator listens
std::string published_blob_endpoint;  // http://PUBLIC-HOST:P, the same endpoint as clients name it

// https://ACCOUNT.blob.core.windows.net/CONTAINER?SAS, as a program written for the cloud names a
// container, is the same container at the emulator's own Blob endpoint (path-style): a SAS signs
// the account, container and blob, not the URL's shape.
void to_local_endpoint(Url& u) {
    static constexpr std::string_view kSuffix = ".blob.core.windows.net";
    {
        // The endpoint by the name clients use (--public-host), which may not resolve here.
        std::lock_guard lock(local_blob_mutex);
        if (!published_blob_endpoint.empty() && text::iequals(u.base, published_blob_endpoint)) {
            u.base = local_blob_endpoint;
            return;
        }
    }
    std::string host = text::lower(u.base.substr(u.base.find("://") + 3));
    if (host.ends_with(":443") || host.ends_with(":80")) host = host.substr(0, host.rfind(':'));
    if (host.size() <= kSuffix.size() || !host.ends_with(kSuffix)) return;
    const std::string account = host.substr(0, host.size() - kSuffix.size());
    if (account.find_first_of(".:@") != std::string::npos) return;
    std::lock_guard lock(local_blob_mutex);
    if (local_blob_endpoint.empty()) return;
    u.base = local_blob_endpoint;
    u.path = "/" + account + u.path;
}

std::optional<Url> split_url(const std::string& url) {
    size_t scheme = url.find("://");
    if (scheme == std::string::npos) return std::nullopt;
    size_t slash = url.find('/', scheme + 3);
    Url u;
    u.base = url.substr(0, slash);
    std::string rest = slash == std::string::npos ? "/" : url.substr(slash);
    size_t question = rest.find('?');
    u.path = rest.substr(0, question);
    u.query = question == std::string::npos ? "" : rest.substr(question + 1);
    to_local_endpoint(u);
    return u;
}

json failure(const std::string& code, const std::string& message) {
    return {{"category", "UserError"}, {"code", code}, {"message", message}};
}

// The URL's host: "127.0.0.1" of http://127.0.0.1:10000, "::1" of http://[::1]:10000.
std::string host_of(const Url& u) {
    std::string authority = u.base.substr(u.base.find("://") + 3);
    if (const size_t at = authority.rfind('@'); at != std::string::npos) authority = authority.substr(at + 1);
    if (!authority.empty() && authority[0] == '[') return authority.substr(1, authority.find(']') - 1);
    return authority.substr(0, authority.find(':'));
}

// The emulator reaches loopback addresses only (its own Blob endpoint, or a server of the user's
// on this machine): the failure `code` for any other host.
std::optional<json> off_machine(const Url& u, const char* code) {
    if (http::is_loopback_host(host_of(u))) return std::nullopt;
    return failure(code, "The emulator reaches loopback addresses only (its own Blob endpoint among them), not " + u.base);
}

std::unique_ptr<httplib::Client> client_for(const Url& u) {
    auto client = std::make_unique<httplib::Client>(u.base);
    client->enable_server_certificate_verification(false);
    client->set_connection_timeout(std::chrono::seconds(10));
    client->set_read_timeout(std::chrono::seconds(300));
    return client;
}

std::string target(const Url& u, const std::string& path, const std::string& extra_query = "") {
    std::string query = u.query;
    if (!extra_query.empty()) query = query.empty() ? extra_query : extra_query + "&" + query;
    return path + (query.empty() ? "" : "?" + query);
}

// GETs url into file; the failure when it cannot.
std::optional<json> download(const Url& u, const std::string& path, const fs::path& file) {
    auto client = client_for(u);
    httplib::Result r = client->Get(target(u, path));
    if (!r) return failure("ResourceContainerAccessDenied", "Cannot reach " + u.base + path + ": " + httplib::to_string(r.error()));
    if (r->status != 200) {
        return failure("BlobDownloadMiscError", "Downloading " + u.base + path + " answered " + std::to_string(r->status));
    }
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << r->body;
    if (!out) return failure("DiskFull", "Cannot write " + file.string());
    return std::nullopt;
}

// The blob names of a container (SAS in u.query) under `prefix`, through List Blobs.
std::optional<std::vector<std::string>> list_blobs(const Url& u, const std::string& prefix, json& error) {
    auto client = client_for(u);
    std::vector<std::string> names;
    std::string marker;
    do {
        std::string extra = "restype=container&comp=list";
        if (!prefix.empty()) extra += "&prefix=" + text::percent_encode(prefix);
        if (!marker.empty()) extra += "&marker=" + text::percent_encode(marker);
        httplib::Result r = client->Get(target(u, u.path, extra));
        if (!r || r->status != 200) {
            error = failure("ResourceContainerListMiscError",
                            "Listing " + u.base + u.path + " answered " + (r ? std::to_string(r->status) : httplib::to_string(r.error())));
            return std::nullopt;
        }
        for (size_t at = r->body.find("<Name>"); at != std::string::npos; at = r->body.find("<Name>", at + 6)) {
            size_t end = r->body.find("</Name>", at);
            names.push_back(r->body.substr(at + 6, end - at - 6));
        }
        size_t m = r->body.find("<NextMarker>");
        marker = m == std::string::npos ? "" : r->body.substr(m + 12, r->body.find("</NextMarker>", m) - m - 12);
    } while (!marker.empty());
    for (std::string& n : names) {  // XML-escaped in the listing
        for (auto [from, to] : {std::pair{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}}) {
            for (size_t p = n.find(from); p != std::string::npos; p = n.find(from, p + 1)) n.replace(p, std::string(from).size(), to);
        }
    }
    return names;
}

bool has_wildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// The files under `base` that `pattern` (relative to base; "**" crosses directories) matches,
// as paths relative to the pattern's fixed leading directories, with those directories.
std::vector<std::pair<fs::path, std::string>> match_files(const fs::path& base, const std::string& pattern) {
    std::vector<std::pair<fs::path, std::string>> out;
    if (!has_wildcard(pattern)) {
        fs::path file = (base / pattern).lexically_normal();
        std::error_code ec;
        if (fs::is_regular_file(file, ec)) out.push_back({file, file.filename().string()});
        return out;
    }
    // The leading directories without wildcards.
    std::string fixed;
    size_t start = 0;
    for (size_t slash = pattern.find('/'); slash != std::string::npos; slash = pattern.find('/', start)) {
        std::string part = pattern.substr(start, slash - start);
        if (has_wildcard(part)) break;
        fixed += part + "/";
        start = slash + 1;
    }
    const std::string rest = pattern.substr(fixed.size());
    const fs::path root = (base / fixed).lexically_normal();
    const bool deep = rest.find("**") != std::string::npos;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        std::string relative = it->path().lexically_relative(root).string();
        // "**/" also matches no directory at all.
        bool matches = ::fnmatch(rest.c_str(), relative.c_str(), deep ? 0 : FNM_PATHNAME) == 0;
        if (!matches && deep && rest.rfind("**/", 0) == 0) matches = ::fnmatch(rest.substr(3).c_str(), relative.c_str(), FNM_PATHNAME) == 0;
        if (matches) out.push_back({it->path(), relative});
    }
    return out;
}

}  // namespace

void set_local_blob_endpoint(const std::string& url, const std::string& published) {
    std::lock_guard lock(local_blob_mutex);
    local_blob_endpoint = url;
    published_blob_endpoint = published == url ? "" : published;
}

std::optional<json> download_resource_files(const json& task, const fs::path& wd) {
    for (const json& r : task.value("resourceFiles", json::array())) {
        if (!r.is_object()) continue;
        const std::string file_path = r.value("filePath", "");
        if (r.contains("httpUrl")) {
            std::optional<Url> u = split_url(r.value("httpUrl", ""));
            if (!u) return failure("ResourceFileUrlInvalid", "The resource file URL is not a URL: " + r.value("httpUrl", ""));
            if (auto f = off_machine(*u, "ResourceContainerAccessDenied")) return f;
            std::string name = file_path.empty() ? u->path.substr(u->path.rfind('/') + 1) : file_path;
            auto decoded = storage::percent_decode(name, false);
            if (auto f = download(*u, u->path, wd / decoded.value_or(name))) return f;
        } else if (r.contains("storageContainerUrl")) {
            std::optional<Url> u = split_url(r.value("storageContainerUrl", ""));
            if (!u) return failure("ResourceFileUrlInvalid", "The container URL is not a URL");
            if (auto f = off_machine(*u, "ResourceContainerAccessDenied")) return f;
            json error;
            std::optional<std::vector<std::string>> blobs = list_blobs(*u, r.value("blobPrefix", ""), error);
            if (!blobs) return error;
            for (const std::string& blob : *blobs) {
                if (auto f = download(*u, u->path + "/" + text::percent_encode(blob, true), wd / file_path / blob)) return f;
            }
        } else {
            return failure("ResourceFileSourceMissing", "A resource file has neither httpUrl nor storageContainerUrl");
        }
    }
    return std::nullopt;
}

std::optional<std::string> upload_blob(const std::string& container_url, const std::string& name, const std::string& content) {
    std::optional<Url> u = split_url(container_url);
    if (!u) return "the containerUrl is not a URL";
    if (auto f = off_machine(*u, "FileUploadContainerUrlInvalid")) return (*f)["message"].get<std::string>();
    httplib::Headers headers{{"x-ms-blob-type", "BlockBlob"}, {"x-ms-version", "2020-04-08"}};
    httplib::Result r = client_for(*u)->Put(target(*u, u->path + "/" + text::percent_encode(name, true)), headers, content,
                                            "application/octet-stream");
    if (!r) return "cannot reach " + u->base + ": " + httplib::to_string(r.error());
    if (r->status != 201) return u->base + u->path + " answered " + std::to_string(r->status);
    return std::nullopt;
}

std::optional<json> upload_output_files(const json& task, const fs::path& task_dir, bool succeeded) {
    for (const json& o : task.value("outputFiles", json::array())) {
        if (!o.is_object()) continue;
        const std::string condition = o.value("uploadOptions", json::object()).value("uploadCondition", "taskCompletion");
        if ((condition == "taskSuccess" && !succeeded) || (condition == "taskFailure" && succeeded)) continue;
        const json container = o.value("destination", json::object()).value("container", json::object());
        std::optional<Url> u = split_url(container.value("containerUrl", ""));
        if (!u) return failure("FileUploadContainerUrlInvalid", "An output file's containerUrl is not a URL");
        if (auto f = off_machine(*u, "FileUploadContainerUrlInvalid")) return f;
        const std::string pattern = o.value("filePattern", "");
        const std::string dest = container.value("path", "");
        auto client = client_for(*u);
        for (const auto& [file, relative] : match_files(task_dir / "wd", pattern)) {
            // One file, no wildcard: `path` is the blob's name. A pattern: `path` is a prefix.
            std::string name = has_wildcard(pattern) || dest.empty() ? (dest.empty() ? relative : dest + "/" + relative) : dest;
            std::ifstream in(file, std::ios::binary);
            std::stringstream content;
            content << in.rdbuf();
            httplib::Headers headers{{"x-ms-blob-type", "BlockBlob"}, {"x-ms-version", "2020-04-08"}};
            httplib::Result r = client->Put(target(*u, u->path + "/" + text::percent_encode(name, true)), headers, content.str(),
                                            "application/octet-stream");
            if (!r || r->status != 201) {
                return failure("FileUploadMiscError", "Uploading " + file.string() + " to " + u->base + u->path + " answered " +
                                                          (r ? std::to_string(r->status) : httplib::to_string(r.error())));
            }
        }
    }
    return std::nullopt;
}

}  // namespace bai::batch
