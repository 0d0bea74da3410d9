#include "emulator/portal/portal_routes.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/text/ascii.h"
#include "common/version.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/output_files.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/portal/portal_assets.h"
#include "emulator/portal/portal_json.h"
#include "emulator/portal/portal_node_logs.h"
#include "emulator/portal/portal_storage_params.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::portal {
namespace {

using nlohmann::json;

// The kinds the resource list shows, in the order the page offers them.
const std::vector<std::string> kKinds = {arm::kind::kResourceGroup, arm::kind::kStorageAccount, arm::kind::kBatchAccount,
                                         arm::kind::kWorkspace,     arm::kind::kExperiment,     arm::kind::kCluster,
                                         arm::kind::kFileServer,    arm::kind::kJob};
constexpr int kMaxPage = 1000;
constexpr std::uint64_t kMaxRead = 64 * 1024;  // what one read of an output file returns at most
constexpr size_t kMaxFilter = 256;
constexpr int kChildrenShown = 20;  // of each kind, on a resource's page

void send_asset(httplib::Response& res, const char* body, const char* type) {
    set_portal_headers(res);
    // Scripts, styles and data only from here; no inline script, no framing by another site.
    res.set_header("Content-Security-Policy",
                   "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                   "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.set_header("X-Frame-Options", "DENY");
    res.set_content(body, type);
}

std::string text_at(const json& body, const char* a, const char* b = nullptr) {
    const json* at = body.contains(a) ? &body[a] : nullptr;
    if (at && b) at = at->is_object() && at->contains(b) ? &(*at)[b] : nullptr;
    return at && at->is_string() ? at->get<std::string>() : std::string();
}

// The property a kind's lists show as its state (one table for the documents read here and the
// store's lists): a job's execution state, a cluster's allocation state, the others' provisioning.
std::string state_property_of(const std::string& kind) {
    if (kind == arm::kind::kJob) return "executionState";
    if (kind == arm::kind::kCluster) return "allocationState";
    return "provisioningState";
}

std::string state_of(const arm::StoredResource& r) { return text_at(r.body, "properties", state_property_of(r.type).c_str()); }

// The same, as the JSON path the store's lists read.
std::string state_path_of(const std::string& kind) { return "$.properties." + state_property_of(kind); }

json item_of(const arm::StoredResource& r) {
    std::string id = text_at(r.body, "id");
    if (id.empty()) id = r.key;
    std::string name = text_at(r.body, "name");
    if (name.empty()) name = id.substr(id.rfind('/') + 1);
    json item{{"id", id}, {"name", name}, {"type", r.type}, {"state", state_of(r)}};
    if (std::string created = text_at(r.body, "properties", "creationTime"); !created.empty()) item["created"] = created;
    return item;
}

// A query parameter that must be a whole number within [low, high]; `fallback` when absent.
std::optional<int> number_param(const httplib::Request& req, httplib::Response& res, const char* name, int fallback,
                                int low, int high) {
    if (!req.has_param(name)) return fallback;
    const std::string text = req.get_param_value(name);
    int value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
        send_portal_error(res, 400, "InvalidParameter",
                   std::string("The parameter ") + name + " must be a whole number from " + std::to_string(low) + " to " +
                       std::to_string(high) + ".");
        return std::nullopt;
    }
    return value;
}

std::optional<std::string> text_param(const httplib::Request& req, httplib::Response& res, const char* name) {
    std::string text = req.has_param(name) ? req.get_param_value(name) : "";
    if (text.size() > kMaxFilter) {
        send_portal_error(res, 400, "InvalidParameter",
                   std::string("The parameter ") + name + " is longer than " + std::to_string(kMaxFilter) + " characters.");
        return std::nullopt;
    }
    return text;
}

void overview(const PortalSources& s, httplib::Response& res) {
    json accounts = json::array();
    for (const std::string& name : s.accounts.names()) {
        std::optional<storage::Account> account = s.accounts.find(name);
        if (!account) continue;
        accounts.push_back({{"name", account->name},
                            {"key", account->key1},
                            {"connectionString", storage::connection_string(*account, s.endpoints.blob, s.endpoints.file)}});
    }
    // Counted by the store (no document read here: an overview of 10,000 jobs parses none).
    json counts = json::object();
    for (const std::string& kind : kKinds) counts[kind] = 0;
    for (const auto& [kind, count] : s.resources.count_by_type()) {
        if (counts.contains(kind)) counts[kind] = count;
    }
    json job_states = json::object();
    for (const auto& [state, count] : s.resources.count_by_state(arm::kind::kJob, state_path_of(arm::kind::kJob))) {
        job_states[state.empty() ? "unknown" : state] = count;
    }
    send_json(res, 200,
         json{{"version", kVersion},
              {"dataDirectory", s.location.string()},
              {"endpoints", {{"arm", s.endpoints.arm}, {"blob", s.endpoints.blob}, {"file", s.endpoints.file},
                             {"batch", s.endpoints.batch}, {"caCertificate", s.endpoints.ca_cert}}},
              {"accounts", accounts},
              {"counts", counts},
              {"jobStates", job_states}});
}

void resources(const PortalSources& s, const httplib::Request& req, httplib::Response& res) {
    const std::string kind = req.has_param("type") ? req.get_param_value("type") : "";
    if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end()) {
        std::string names;
        for (const std::string& k : kKinds) names += (names.empty() ? "" : ", ") + k;
        return send_portal_error(res, 400, "InvalidParameter", "The parameter type must be one of " + names + ".");
    }
    std::optional<std::string> state = text_param(req, res, "state");
    if (!state) return;
    std::optional<std::string> search = text_param(req, res, "q");
    if (!search) return;
    std::optional<int> skip = number_param(req, res, "skip", 0, 0, 1 << 30);
    if (!skip) return;
    std::optional<int> top = number_param(req, res, "top", 100, 1, kMaxPage);
    if (!top) return;
    // Newest first, filtered and paged by the store: one page's worth of rows comes back.
    const arm::SummaryPage page = s.resources.summaries(kind, state_path_of(kind), *state, text::lower(*search), *skip, *top);
    json items = json::array();
    for (const arm::ResourceSummary& r : page.items) {
        json item{{"id", r.id.empty() ? r.key : r.id},
                  {"name", r.name.empty() ? r.key.substr(r.key.rfind('/') + 1) : r.name},
                  {"type", kind},
                  {"state", r.state}};
        if (!r.created.empty()) item["created"] = r.created;
        items.push_back(item);
    }
    send_json(res, 200, json{{"type", kind}, {"total", page.total}, {"skip", *skip}, {"top", *top}, {"items", items}});
}

void resource(const PortalSources& s, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.has_param("id") ? req.get_param_value("id") : "";
    if (id.empty() || id.size() > 2048 || id.front() != '/') {
        return send_portal_error(res, 400, "InvalidParameter", "The parameter id must be an ARM resource id (/subscriptions/...).");
    }
    std::optional<arm::StoredResource> found = s.resources.get(id);
    if (!found) return send_portal_error(res, 404, "ResourceNotFound", "There is no resource " + id + ".");
    json out{{"type", found->type}, {"state", state_of(*found)}, {"document", arm::redacted_view(*found)}};
    // A cluster's nodes, or the nodes a job runs on.
    const bool cluster = found->type == arm::kind::kCluster;
    if (s.nodes && (cluster || found->type == arm::kind::kJob)) {
        json nodes = json::array();
        for (const json& node : s.nodes()) {
            const bool mine = cluster ? node.value("clusterKey", "") == found->key
                                      : node["job"].is_string() && text::lower(node["job"].get<std::string>()) == found->key;
            if (mine) nodes.push_back(node);
        }
        out["nodes"] = nodes;
    }
    if (s.history && (cluster || found->type == arm::kind::kJob)) {
        // Events older than the document belong to an earlier resource of the same name (the
        // times are the engine's, written as the documents' are: they compare as text).
        const std::string created = text_at(found->body, "properties", "creationTime");
        json history = json::array();
        for (json& event : s.history(found->type, found->key)) {
            if (created.empty() || event.value("time", "") >= created) history.push_back(std::move(event));
        }
        out["history"] = std::move(history);
    }
    // What it holds, by kind: the first page of each (the tree's next level).
    json children = json::object();
    for (const std::string& kind : kKinds) {
        arm::Page page = s.resources.children(found->key, kind, 0, kChildrenShown);
        if (page.items.empty()) continue;
        json items = json::array();
        for (const arm::StoredResource& child : page.items) items.push_back(item_of(child));
        children[kind] = {{"items", items}, {"more", page.next_after.has_value()}};
    }
    out["children"] = children;
    send_json(res, 200, out);
}

// The job named by ?id=, or an error answered.
std::optional<arm::StoredResource> job_of(const PortalSources& s, const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.has_param("id") ? req.get_param_value("id") : "";
    if (id.empty() || id.size() > 2048 || id.front() != '/') {
        send_portal_error(res, 400, "InvalidParameter", "The parameter id must be a job's ARM id (/subscriptions/...).");
        return std::nullopt;
    }
    std::optional<arm::StoredResource> job = s.resources.get(id);
    if (!job || job->type != arm::kind::kJob) {
        send_portal_error(res, 404, "JobNotFound", "There is no job " + id + ".");
        return std::nullopt;
    }
    return job;
}

// Where ?dir= (default stdouterr) and `path` lie for the job; nullopt with the error answered.
std::optional<arm::OutputLocation> output_of(const PortalSources& s, const arm::StoredResource& job,
                                             const httplib::Request& req, const std::string& path, httplib::Response& res) {
    const std::string dir = req.has_param("dir") ? req.get_param_value("dir") : "stdouterr";
    try {
        std::optional<arm::OutputLocation> where = arm::locate_output(s.resources, job, dir, path);
        if (!where) {
            send_portal_error(res, 404, "OutputNotInStorage",
                       "The job's output directory " + dir + " is not in a file share or a blob container it mounts.");
        }
        return where;
    } catch (const arm::CloudError& e) {
        send_portal_error(res, e.status(), e.code(), e.what());
        return std::nullopt;
    }
}

// Where the job's stdouterr lies on a node's own disk, when ?dir= is stdouterr (the default) and
// no share or container holds it ($AZ_BATCHAI_JOB_TEMP) and the engine ran the job since the start.
std::optional<NodeLogsPlace> node_local_stdouterr(const PortalSources& s, const arm::StoredResource& job,
                                                  const httplib::Request& req, const std::string& path) {
    if (!s.node_logs || (req.has_param("dir") && req.get_param_value("dir") != "stdouterr")) return std::nullopt;
    try {
        if (arm::locate_output(s.resources, job, "stdouterr", path)) return std::nullopt;
    } catch (const arm::CloudError&) {
        return std::nullopt;  // (answered by output_of, as for any directory)
    }
    return s.node_logs(job.key);
}

const char* const kNodeGone = "The job's stdouterr is on its node's own disk ($AZ_BATCHAI_JOB_TEMP), and that node has left "
                              "(or the file is not there).";

// The files and directories of a job's output directory: ?id=JOB&dir=stdouterr&path=.
void job_files(const PortalSources& s, const httplib::Request& req, httplib::Response& res) {
    std::optional<arm::StoredResource> job = job_of(s, req, res);
    if (!job) return;
    const std::string asked = req.has_param("path") ? req.get_param_value("path") : ".";
    if (std::optional<NodeLogsPlace> local = node_local_stdouterr(s, *job, req, asked)) {
        std::optional<json> items = list_node_logs(*local, asked, kMaxPage);
        if (!items) return send_portal_error(res, 404, "FileNotFound", kNodeGone);
        return send_json(res, 200, json{{"items", *items}, {"nodeLocal", true}});
    }
    std::optional<arm::OutputLocation> where = output_of(s, *job, req, req.has_param("path") ? req.get_param_value("path") : ".", res);
    if (!where) return;
    json items = json::array();
    try {
        const std::string& account = where->volume.account;
        const std::string& container = where->volume.container;
        const std::optional<storage::Account> account_record = s.accounts.find(account);
        storage::ListOptions options;
        if (where->volume.blob()) {
            options.prefix = where->path.empty() ? "" : where->path + "/";
            options.delimiter = "/";
            options.brief = true;
            do {
                storage::BlobListPage page = s.blobs->list_blobs(account, container, options);
                for (const storage::BlobListEntry& e : page.entries) {
                    std::string name = (e.is_prefix ? e.prefix : e.blob.name).substr(options.prefix.size());
                    if (e.is_prefix) name.pop_back();
                    if (name.empty()) continue;
                    json item{{"name", name}, {"directory", e.is_prefix}, {"size", e.blob.size}};
                    if (!e.is_prefix && account_record) {
                        item["downloadUrl"] = download_url(s.endpoints, *account_record, true, container, e.blob.name);
                    }
                    items.push_back(item);
                }
                options.marker = page.next_marker;
            } while (!options.marker.empty() && items.size() < static_cast<size_t>(kMaxPage));
        } else {
            s.files->adopt_disk_changes(account, container, where->path, /*whole_subtree=*/false);
            do {
                storage::DirectoryPage page = s.files->list_directory(account, container, where->path, options);
                for (const storage::ShareEntry& e : page.entries) {
                    json item{{"name", e.name}, {"directory", e.is_dir}, {"size", e.is_dir ? 0 : e.size}};
                    if (!e.is_dir && account_record) {
                        const std::string full = where->path.empty() ? e.name : where->path + "/" + e.name;
                        item["downloadUrl"] = download_url(s.endpoints, *account_record, false, container, full);
                    }
                    items.push_back(item);
                }
                options.marker = page.next_marker;
            } while (!options.marker.empty() && items.size() < static_cast<size_t>(kMaxPage));
        }
    } catch (const storage::StorageError& e) {
        if (e.status() != 404) throw;  // nothing written there yet: an empty directory
    }
    send_json(res, 200, json{{"items", items}});
}

void send_text_part(httplib::Response& res, std::string bytes, std::uint64_t size, int from);

// Up to 64 KiB of an output file from ?from= (bytes), with its size: ?id=JOB&dir=stdouterr&path=stdout.txt.
void job_file(const PortalSources& s, const httplib::Request& req, httplib::Response& res) {
    std::optional<arm::StoredResource> job = job_of(s, req, res);
    if (!job) return;
    const std::string path = req.has_param("path") ? req.get_param_value("path") : "";
    if (path.empty() || path.size() > 1024) {
        return send_portal_error(res, 400, "InvalidParameter", "The parameter path must name a file of the output directory.");
    }
    std::optional<int> from = number_param(req, res, "from", 0, 0, std::numeric_limits<int>::max());
    if (!from) return;
    std::string bytes;
    std::uint64_t size = 0;
    if (std::optional<NodeLogsPlace> local = node_local_stdouterr(s, *job, req, path)) {
        std::optional<NodeLogRead> read = read_node_log(*local, path, static_cast<std::uint64_t>(*from), kMaxRead);
        if (!read) return send_portal_error(res, 404, "FileNotFound", kNodeGone);
        return send_text_part(res, std::move(read->bytes), read->size, *from);
    }
    std::optional<arm::OutputLocation> where = output_of(s, *job, req, path, res);
    if (!where) return;
    try {
        const std::string& account = where->volume.account;
        const std::string& container = where->volume.container;
        if (where->volume.blob()) {
            storage::OpenBlob blob = s.blobs->open_blob(account, container, where->path);
            size = blob.info.size;
            if (static_cast<std::uint64_t>(*from) < size) {
                bytes.resize(std::min<std::uint64_t>(kMaxRead, size - static_cast<std::uint64_t>(*from)));
                ssize_t n = blob.read(bytes.data(), bytes.size(), static_cast<std::uint64_t>(*from));
                bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
            }
        } else {
            const size_t slash = where->path.rfind('/');
            s.files->adopt_disk_changes(account, container, slash == std::string::npos ? "" : where->path.substr(0, slash),
                                        /*whole_subtree=*/false);
            storage::OpenFile file = s.files->open_file(account, container, where->path);
            size = file.info.size;
            if (static_cast<std::uint64_t>(*from) < size) {
                bytes.resize(std::min<std::uint64_t>(kMaxRead, size - static_cast<std::uint64_t>(*from)));
                ssize_t n = ::pread(file.fd, bytes.data(), bytes.size(), static_cast<off_t>(*from));
                bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
            }
        }
    } catch (const storage::StorageError& e) {
        if (e.status() != 404) throw;
        return send_portal_error(res, 404, "FileNotFound", "The job's output has no file " + path + " (yet).");
    }
    send_text_part(res, std::move(bytes), size, *from);
}

// A part of an output file read from `from`, with the file's size: a character cut at the read's
// end is left to the next read (which starts at `next`).
void send_text_part(httplib::Response& res, std::string bytes, std::uint64_t size, int from) {
    if (bytes.size() == kMaxRead) {
        size_t cut = bytes.size();
        for (size_t back = 1; back <= 3 && back <= bytes.size(); ++back) {
            const auto c = static_cast<unsigned char>(bytes[bytes.size() - back]);
            if ((c & 0xC0) == 0x80) continue;  // a continuation byte
            const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            if (length > back) cut = bytes.size() - back;
            break;
        }
        bytes.resize(cut);
    }
    // Bytes that are not UTF-8 (a binary file) show as U+FFFD (send_json).
    send_json(res, 200, json{{"size", size}, {"from", from}, {"next", static_cast<std::uint64_t>(from) + bytes.size()},
                             {"text", bytes}});
}

}  // namespace

void add_portal_routes(http::Routes& routes, const PortalSources& sources, bool enabled) {
    if (!enabled) {
        auto off = [](const httplib::Request&, httplib::Response& res) {
            send_portal_error(res, 403, "PortalDisabled",
                       "The portal is off while the emulator runs with --strict-auth (it has no sign-in).");
        };
        routes.Get(R"(/portal(/.*)?)", off);
        return;
    }
    for (size_t i = 0; i < kPortalAssetCount; ++i) {
        const PortalAsset& asset = kPortalAssets[i];
        const std::string name = asset.name;
        const std::string path = name == "index.html" ? "/portal/?" : "/portal/" + name;
        routes.Get(path, [&asset](const httplib::Request&, httplib::Response& res) {
            send_asset(res, asset.body, asset.type);
        });
    }
    routes.Get("/portal/api/overview", [sources](const httplib::Request&, httplib::Response& res) { overview(sources, res); });
    routes.Get("/portal/api/resources", [sources](const httplib::Request& req, httplib::Response& res) {
        resources(sources, req, res);
    });
    routes.Get("/portal/api/resource", [sources](const httplib::Request& req, httplib::Response& res) {
        resource(sources, req, res);
    });
    if (sources.files && sources.blobs) {
        routes.Get("/portal/api/job-files", [sources](const httplib::Request& req, httplib::Response& res) {
            job_files(sources, req, res);
        });
        routes.Get("/portal/api/job-file", [sources](const httplib::Request& req, httplib::Response& res) {
            job_file(sources, req, res);
        });
    }
    routes.Get(R"(/portal/.*)", [](const httplib::Request& req, httplib::Response& res) {
        send_portal_error(res, 404, "NotFound", "The portal has no page " + req.path + ".");
    });
}

}  // namespace bai::portal
