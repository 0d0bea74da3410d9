#include "emulator/arm/output_files.h"

#include <algorithm>

#include "common/time/timestamps.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/mount_volumes.h"
#include "emulator/arm/preview_api.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/router.h"
#include "emulator/arm/text.h"
#include "fake_storage/auth/sas_signer.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::arm {
namespace {

enum class ListingStyle { preview, march_2018, stable };

using nlohmann::json;

using Location = OutputLocation;

// "a//b/./c" -> {"a","b","c"}; nullopt when ".." appears.
std::optional<std::vector<std::string>> clean_segments(const std::string& path) {
    std::vector<std::string> out;
    for (std::string& s : split_path(path)) {
        if (s == ".") continue;
        if (s == "..") return std::nullopt;
        out.push_back(std::move(s));
    }
    return out;
}

std::string join(const std::vector<std::string>& parts, size_t from = 0) {
    std::string out;
    for (size_t i = from; i < parts.size(); ++i) out += (out.empty() ? "" : "/") + parts[i];
    return out;
}

// Strips a mount-root prefix ($AZ_BATCHAI_MOUNT_ROOT, ${...}, the service's literal path).
std::optional<std::string> after_root(const std::string& path, const std::vector<std::string>& roots) {
    for (const std::string& root : roots) {
        if (path.rfind(root, 0) == 0 && (path.size() == root.size() || path[root.size()] == '/')) {
            return path.substr(root.size());
        }
    }
    return std::nullopt;
}

std::optional<Location> locate(const ResourceStore& store, const json& job, const std::string& prefix,
                               const std::vector<std::string>& below) {
    const json& p = job["properties"];
    std::vector<Volume> volumes;
    std::optional<std::string> rest = after_root(prefix, {"$AZ_BATCHAI_JOB_MOUNT_ROOT", "${AZ_BATCHAI_JOB_MOUNT_ROOT}"});
    if (rest) {
        volumes = volumes_of(p.value("mountVolumes", json()));
    } else {
        rest = after_root(prefix, {"$AZ_BATCHAI_MOUNT_ROOT", "${AZ_BATCHAI_MOUNT_ROOT}",
                                   "/mnt/batch/tasks/shared/LS_root/mounts"});
        if (!rest) return std::nullopt;
        if (auto cluster = store.get(p["cluster"]["id"].get<std::string>())) {
            const json& setup = cluster->body["properties"].value("nodeSetup", json::object());
            volumes = volumes_of(setup.value("mountVolumes", json()));
        }
    }
    auto segments = clean_segments(*rest);
    if (!segments) return std::nullopt;
    for (const Volume& v : volumes) {
        if (!v.in_storage()) continue;  // a file server or another file system: no REST API lists it
        auto mount = clean_segments(v.relative);
        if (!mount || mount->empty() || mount->size() > segments->size()) continue;
        if (!std::equal(mount->begin(), mount->end(), segments->begin())) continue;
        std::vector<std::string> inside(segments->begin() + static_cast<long>(mount->size()), segments->end());
        inside.insert(inside.end(), below.begin(), below.end());
        return Location{v, join(inside)};
    }
    return std::nullopt;
}

json file_item(const ArmContext& ctx, const Location& where, const std::string& name, std::uint64_t size,
               time::TimePoint modified, time::TimePoint expiry, ListingStyle style) {
    std::string path = where.path.empty() ? name : where.path + "/" + name;
    std::optional<storage::Account> account = ctx.accounts.find(where.volume.account);
    std::string base = where.volume.blob() ? ctx.blob_endpoint : ctx.file_endpoint;
    std::string url = base + "/" + where.volume.account + "/" + storage::encode_url_path(where.volume.container + "/" + path);
    if (account) {
        url += "?" + storage::read_sas_query(*account, where.volume.blob() ? storage::SasService::blob : storage::SasService::file,
                                             where.volume.container, path, expiry);
    }
    json item{{"name", name}, {"downloadUrl", url},
              {"properties", {{"lastModified", arm_time(modified)}, {"contentLength", size}}}};
    // As each api-version answered: 2018-05-01 `fileType`, 2018-03-01 `isDirectory`, the preview
    // neither (recorded in September and December 2017).
    if (style == ListingStyle::stable) item["fileType"] = "file";
    if (style == ListingStyle::march_2018) item["isDirectory"] = false;
    return item;
}

// The preview listed files only (recorded: no directory entries, no isDirectory).
json directory_item(const std::string& name, ListingStyle style) {
    if (style == ListingStyle::stable) return {{"name", name}, {"fileType", "directory"}};
    return {{"name", name}, {"isDirectory", true}};
}

json list_location(const ArmContext& ctx, const Location& where, time::TimePoint expiry, ListingStyle style) {
    json items = json::array();
    try {
        if (where.volume.blob()) {
            storage::ListOptions options;
            options.prefix = where.path.empty() ? "" : where.path + "/";
            options.delimiter = "/";
            do {
                storage::BlobListPage page = ctx.blobs.list_blobs(where.volume.account, where.volume.container, options);
                for (const storage::BlobListEntry& e : page.entries) {
                    std::string name = (e.is_prefix ? e.prefix : e.blob.name).substr(options.prefix.size());
                    if (e.is_prefix) {
                        if (style != ListingStyle::preview) items.push_back(directory_item(name.substr(0, name.size() - 1), style));
                    } else if (!name.empty()) {
                        items.push_back(file_item(ctx, where, name, e.blob.size, e.blob.last_modified, expiry, style));
                    }
                }
                options.marker = page.next_marker;
            } while (!options.marker.empty());
        } else {
            // What the job's processes wrote into this directory joins the index first (its
            // subdirectories' contents when they are listed).
            ctx.files.adopt_disk_changes(where.volume.account, where.volume.container, where.path,
                                         /*whole_subtree=*/false);
            storage::ListOptions options;
            do {
                storage::DirectoryPage page = ctx.files.list_directory(where.volume.account, where.volume.container,
                                                                       where.path, options);
                for (const storage::ShareEntry& e : page.entries) {
                    if (e.is_dir && style == ListingStyle::preview) continue;  // the preview listed files only
                    items.push_back(e.is_dir ? directory_item(e.name, style)
                                             : file_item(ctx, where, e.name, e.size, e.last_modified, expiry, style));
                }
                options.marker = page.next_marker;
            } while (!options.marker.empty());
        }
    } catch (const storage::StorageError& e) {
        // A name the store refuses (a character Azure Files does not allow) names nothing there.
        if (e.status() == 400) {
            throw bad_request("InvalidQueryParameterValue", "directory is not a valid path: " + std::string(e.what()),
                              "directory");
        }
        if (e.status() != 404) throw;  // nothing written there yet: an empty directory
    }
    return items;
}

}  // namespace

std::optional<OutputLocation> locate_output(const ResourceStore& store, const StoredResource& job,
                                            const std::string& directory_id, std::string asked) {
    // Either slash separates: a client on Windows sends "a\\b", and "..\\.." must not leave the directory.
    std::replace(asked.begin(), asked.end(), '\\', '/');
    auto directory = clean_segments(asked);
    if (!directory || asked.find('\0') != std::string::npos) {
        throw bad_request("InvalidQueryParameterValue", "directory must stay inside the output directory", "directory");
    }
    const json& p = job.body["properties"];
    const std::string segment = p.value("jobOutputDirectoryPathSegment", "");
    std::string prefix;
    std::optional<std::vector<std::string>> segments = clean_segments(segment);
    if (!segments) throw CloudError(500, "InternalServerError", "The job's output path segment is not a relative path");
    std::vector<std::string> below = std::move(*segments);
    if (iequals(directory_id, "stdouterr")) {
        prefix = p.value("stdOutErrPathPrefix", "");
        if (!uses_preview_output_layout(job.body)) below.push_back("stdouterr");
    } else {
        for (const json& dir : p.value("outputDirectories", json::array())) {
            if (iequals(dir.value("id", ""), directory_id)) {
                prefix = dir.value("pathPrefix", "");
                below.push_back("outputs");
                for (std::string& s : clean_segments(dir.value("pathSuffix", "")).value_or(std::vector<std::string>{})) {
                    below.push_back(std::move(s));
                }
            }
        }
        if (prefix.empty()) {
            throw bad_request("InvalidQueryParameterValue",
                              "The job has no output directory with id '" + directory_id + "'", "outputdirectoryid");
        }
    }
    below.insert(below.end(), directory->begin(), directory->end());
    return locate(store, job.body, prefix, below);
}

void list_output_files(ArmContext& ctx, const ArmRequest& req, const StoredResource& job, httplib::Response& res) {
    const std::string version = req.api_version();
    const ListingStyle style = version == kApiPreview   ? ListingStyle::preview
                               : version == kApi2018March ? ListingStyle::march_2018
                                                          : ListingStyle::stable;
    std::optional<std::string> id = req.query("outputdirectoryid");
    if (!id || id->empty()) {
        throw bad_request("MissingRequiredQueryParameter", "The outputdirectoryid query parameter is required.",
                          "outputdirectoryid");
    }
    int expiry_minutes = req.int_query("linkexpiryinminutes", 60, 5, 600);
    int max_results = req.max_results();
    json items = json::array();
    if (std::optional<Location> where = locate_output(ctx.store, job, *id, req.query("directory").value_or("."))) {
        auto expiry = time::now() + std::chrono::minutes(expiry_minutes);
        items = list_location(ctx, *where, expiry, style);
    }
    std::int64_t skip = skip_token(req);
    json page = json::array();
    for (size_t i = static_cast<size_t>(skip); i < items.size() && static_cast<int>(page.size()) < max_results; ++i) {
        page.push_back(items[i]);
    }
    std::optional<std::int64_t> next;
    if (skip + static_cast<std::int64_t>(page.size()) < static_cast<std::int64_t>(items.size())) {
        next = skip + static_cast<std::int64_t>(page.size());
    }
    send_page(res, req, page, next);
}

}  // namespace bai::arm
