#include "tools/bai/share_upload.h"

#include <algorithm>
#include <chrono>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/text/percent_encoding.h"
#include "common/time/timestamps.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/http_client.h"
#include "tools/bai/json_file.h"

namespace bai::cli {
namespace {

using namespace std::chrono_literals;

constexpr const char* kVersion = "2018-03-28";
constexpr size_t kRangeBytes = 4 * 1024 * 1024;  // the service's Put Range limit

std::string account_sas(const std::string& account, const std::string& key) {
    std::string expiry = time::format_iso8601(time::now() + std::chrono::hours(2), 0);
    std::string to_sign = account + "\nrwdlc\nf\nsco\n\n" + expiry + "\n\nhttps,http\n" + kVersion + "\n";
    std::optional<std::string> raw = crypto::base64_decode(key);
    if (!raw) throw CliError("the key of storage account '" + account + "' is not base64");
    std::string sig = crypto::base64_encode(crypto::hmac_sha256(*raw, to_sign));
    return std::string("sv=") + kVersion + "&ss=f&srt=sco&sp=rwdlc&se=" + text::percent_encode(expiry) +
           "&spr=https,http&sig=" + text::percent_encode(sig);
}

std::string error_of(const httplib::Result& r) {
    if (!r) return httplib::to_string(r.error());
    auto code = r->get_header_value("x-ms-error-code");
    return "HTTP " + std::to_string(r->status) + (code.empty() ? "" : " " + code);
}

}  // namespace

ShareUploader::ShareUploader(std::string file_endpoint, std::string account, std::string key)
    : sas_(account_sas(account, key)), account_(std::move(account)) {
    if (file_endpoint.empty()) throw CliError("the emulator did not say where its File endpoint is");
    client_ = make_client(file_endpoint, "", 60s);
}

std::string ShareUploader::target(const std::string& share, const std::string& path) const {
    std::string out = "/" + account_ + "/" + text::percent_encode(share);
    if (!path.empty()) out.append("/").append(text::percent_encode(path, true));
    return out;
}

void ShareUploader::ensure_share(const std::string& share) {
    auto r = client_->Put(target(share) + "?restype=share&" + sas_, httplib::Headers{{"x-ms-version", kVersion}}, "",
                          "application/octet-stream");
    if (!r || (r->status != 201 && r->status != 409)) {
        throw CliError("cannot create share '" + share + "': " + error_of(r));
    }
}

void ShareUploader::ensure_directories(const std::string& share, const std::string& directory) {
    std::string path;
    size_t start = 0;
    while (start < directory.size()) {
        size_t slash = directory.find('/', start);
        std::string part = directory.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        start = slash == std::string::npos ? directory.size() : slash + 1;
        if (part.empty()) continue;
        path += (path.empty() ? "" : "/") + part;
        auto r = client_->Put(target(share, path) + "?restype=directory&" + sas_,
                              httplib::Headers{{"x-ms-version", kVersion}}, "", "application/octet-stream");
        if (!r || (r->status != 201 && r->status != 409)) {
            throw CliError("cannot create directory '" + path + "' in share '" + share + "': " + error_of(r));
        }
    }
}

void ShareUploader::upload(const std::string& share, const std::string& path, const std::filesystem::path& local) {
    std::string bytes = read_text_file(local.string(), "upload");
    const std::string file = target(share, path);
    auto r = client_->Put(file + "?" + sas_,
                         httplib::Headers{{"x-ms-version", kVersion}, {"x-ms-type", "file"},
                                          {"x-ms-content-length", std::to_string(bytes.size())}},
                         "", "application/octet-stream");
    if (!r || r->status != 201) throw CliError("cannot create file '" + path + "' in share '" + share + "': " + error_of(r));
    for (size_t offset = 0; offset < bytes.size(); offset += kRangeBytes) {
        size_t n = std::min(kRangeBytes, bytes.size() - offset);
        std::string range = "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + n - 1);
        r = client_->Put(file + "?comp=range&" + sas_,
                        httplib::Headers{{"x-ms-version", kVersion}, {"x-ms-range", range}, {"x-ms-write", "update"}},
                        bytes.substr(offset, n), "application/octet-stream");
        if (!r || r->status != 201) throw CliError("cannot write '" + path + "' in share '" + share + "': " + error_of(r));
    }
}

}  // namespace bai::cli
