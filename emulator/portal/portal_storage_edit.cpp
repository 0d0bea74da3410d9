// The storage browser's changes and a blob's or file's properties (portal_storage.h). A target is
// a blob (?account=&container=&name=) or a share's file or directory (?account=&share=&path=);
// every change goes through the stores as a REST call would, so mounts see it as they see those.
#include <nlohmann/json.hpp>
#include <optional>

#include "common/crypto/base64.h"
#include "common/time/timestamps.h"
#include "emulator/arm/resource_view.h"
#include "emulator/portal/portal_guard.h"
#include "emulator/portal/portal_json.h"
#include "emulator/portal/portal_storage.h"
#include "emulator/portal/portal_storage_params.h"
#include "fake_storage/engine/lease.h"
#include "fake_storage/engine/properties.h"

namespace bai::portal {
namespace {

using nlohmann::json;

constexpr size_t kMaxMetadataValue = 8 * 1024;  // the service's limit is on all of it (8 KiB)

// What a request names: a blob or a share's path, in an account that exists.
struct Target {
    storage::Account account;
    bool blob = false;
    std::string volume;  // the container or the share
    std::string path;    // the blob's name or the path in the share
};

std::optional<Target> target_of(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    if (!bounded(req, res, {"container", "name", "share", "path"})) return std::nullopt;
    const bool blob = req.has_param("container");
    if (blob == req.has_param("share")) {
        send_portal_error(res, 400, "InvalidParameter", "Name either a container (container, name) or a share (share, path).");
        return std::nullopt;
    }
    Target t{{}, blob, param(req, blob ? "container" : "share"), param(req, blob ? "name" : "path")};
    while (!t.path.empty() && t.path.front() == '/') t.path.erase(0, 1);
    if (t.volume.empty() || t.path.empty()) {
        send_portal_error(res, 400, "InvalidParameter",
                          std::string("The parameter ") + (blob ? "name" : "path") + " must name a blob or a file.");
        return std::nullopt;
    }
    std::optional<storage::Account> account = account_of(s.accounts, req, res);
    if (!account) return std::nullopt;
    t.account = *account;
    return t;
}

json content_json(const storage::ContentSettings& c) {
    return {{"contentType", c.content_type},         {"contentEncoding", c.content_encoding},
            {"contentLanguage", c.content_language}, {"contentMD5", c.content_md5},
            {"contentDisposition", c.content_disposition}, {"cacheControl", c.cache_control}};
}

json metadata_json(const storage::Metadata& metadata) {
    json out = json::object();
    for (const auto& [name, value] : metadata) out[name] = value;
    return out;
}

void properties(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    std::optional<Target> t = target_of(s, req, res);
    if (!t) return;
    answered(res, [&] {
        if (t->blob) {
            const storage::BlobInfo b = s.blobs.get_blob(t->account.name, t->volume, t->path);
            const storage::LeaseReport lease = storage::report_lease(b.lease, time::now());
            return send_json(res, 200,
                             json{{"name", b.name}, {"size", b.size}, {"etag", b.etag},
                                  {"created", arm::arm_time(b.created)}, {"lastModified", arm::arm_time(b.last_modified)},
                                  {"blobType", storage::blob_type_name(b.type)}, {"tier", b.tier.empty() ? "Hot" : b.tier},
                                  {"leaseState", lease.state}, {"content", content_json(b.content)},
                                  {"metadata", metadata_json(b.metadata)},
                                  {"downloadUrl", download_url(s.endpoints, t->account, true, t->volume, t->path)}});
        }
        s.files.adopt_disk_changes(t->account.name, t->volume, t->path, /*whole_subtree=*/false);
        const storage::ShareEntry f = s.files.get_file(t->account.name, t->volume, t->path);
        send_json(res, 200,
                  json{{"name", f.name}, {"path", f.path}, {"size", f.size}, {"etag", f.etag},
                       {"lastModified", arm::arm_time(f.last_modified)}, {"content", content_json(f.content)},
                       {"metadata", metadata_json(f.metadata)},
                       {"downloadUrl", download_url(s.endpoints, t->account, false, t->volume, t->path)}});
    });
}

void upload(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    if (!change_allowed(req, res, s.token)) return;
    std::optional<Target> t = target_of(s, req, res);
    if (!t) return;
    storage::ContentSettings content;
    content.content_type = req.has_header("Content-Type") ? req.get_header_value("Content-Type") : "application/octet-stream";
    if (content.content_type.empty()) content.content_type = "application/octet-stream";
    answered(res, [&] {
        std::unique_ptr<storage::ContentWriter> writer = s.content.begin(/*with_md5=*/true);
        writer->append(req.body);
        content.content_md5 = crypto::base64_encode(writer->md5());
        if (t->blob) {
            const storage::BlobInfo b = s.blobs.put_blob(t->account.name, t->volume, t->path, *writer, content, {}, {});
            return send_json(res, 201, json{{"name", b.name}, {"size", b.size}, {"etag", b.etag}});
        }
        // Create File, then Put Range by ranges of at most 4 MiB, as a client uploads a file.
        s.files.create_file(t->account.name, t->volume, t->path, req.body.size(), content, {}, {});
        storage::ShareEntry f = s.files.get_file(t->account.name, t->volume, t->path);
        for (size_t offset = 0; offset < req.body.size(); offset += storage::kMaxRangeSize) {
            std::unique_ptr<storage::ContentWriter> range = s.content.begin(/*with_md5=*/false);
            range->append(std::string_view(req.body).substr(offset, storage::kMaxRangeSize));
            f = s.files.put_range(t->account.name, t->volume, t->path, offset, *range);
        }
        send_json(res, 201, json{{"name", f.path}, {"size", f.size}, {"etag", f.etag}});
    });
}

void remove(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    if (!change_allowed(req, res, s.token)) return;
    std::optional<Target> t = target_of(s, req, res);
    if (!t) return;
    answered(res, [&] {
        if (t->blob) {
            s.blobs.delete_blob(t->account.name, t->volume, t->path, {}, storage::DeleteSnapshots::include);
        } else {
            s.files.adopt_disk_changes(t->account.name, t->volume, t->path, /*whole_subtree=*/false);
            bool directory = false;
            try {
                s.files.get_directory(t->account.name, t->volume, t->path);
                directory = true;
            } catch (const storage::StorageError&) {
            }
            if (directory) {
                s.files.delete_directory(t->account.name, t->volume, t->path);
            } else {
                s.files.delete_file(t->account.name, t->volume, t->path);
            }
        }
        send_json(res, 200, json{{"deleted", t->path}});
    });
}

void set_metadata(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    if (!change_allowed(req, res, s.token)) return;
    std::optional<Target> t = target_of(s, req, res);
    if (!t) return;
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.contains("metadata") || !body["metadata"].is_object()) {
        return send_portal_error(res, 400, "InvalidBody", "The body must be {\"metadata\": {NAME: VALUE, ...}}.");
    }
    storage::Metadata metadata;
    size_t total = 0;
    for (const auto& [name, value] : body["metadata"].items()) {
        if (!storage::is_valid_metadata_name(name)) {
            return send_portal_error(res, 400, "InvalidMetadata",
                                     "The metadata name '" + name.substr(0, 64) +
                                         "' is not an identifier (letters, digits, underscore; not starting with a digit).");
        }
        if (!value.is_string()) {
            return send_portal_error(res, 400, "InvalidMetadata", "The metadata value of " + name + " must be a string.");
        }
        const std::string text = value.get<std::string>();
        // Values travel as HTTP headers: visible ASCII and spaces only.
        for (unsigned char c : text) {
            if (c < 0x20 || c > 0x7e) {
                return send_portal_error(res, 400, "InvalidMetadata",
                                         "The metadata value of " + name + " must be printable ASCII (it is sent as a header).");
            }
        }
        total += name.size() + text.size();
        metadata[name] = text;
    }
    if (total > kMaxMetadataValue) {
        return send_portal_error(res, 400, "MetadataTooLarge", "The metadata is larger than 8 KiB.");
    }
    answered(res, [&] {
        if (t->blob) {
            s.blobs.set_blob_metadata(t->account.name, t->volume, t->path, metadata, {});
        } else {
            s.files.set_file_metadata(t->account.name, t->volume, t->path, metadata);
        }
        send_json(res, 200, json{{"metadata", metadata_json(metadata)}});
    });
}

}  // namespace

void add_storage_change_routes(http::Routes& routes, const StorageSources& sources) {
    routes.Get("/portal/api/storage/properties", [sources](const httplib::Request& req, httplib::Response& res) {
        properties(sources, req, res);
    });
    routes.Post("/portal/api/storage/upload", [sources](const httplib::Request& req, httplib::Response& res) {
        upload(sources, req, res);
    });
    routes.Post("/portal/api/storage/delete", [sources](const httplib::Request& req, httplib::Response& res) {
        remove(sources, req, res);
    });
    routes.Post("/portal/api/storage/metadata", [sources](const httplib::Request& req, httplib::Response& res) {
        set_metadata(sources, req, res);
    });
}

}  // namespace bai::portal
