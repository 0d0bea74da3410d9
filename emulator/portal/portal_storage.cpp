#include "emulator/portal/portal_storage.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/time/timestamps.h"
#include "emulator/arm/resource_view.h"
#include "emulator/portal/portal_json.h"
#include "emulator/portal/portal_storage_params.h"
#include "fake_storage/auth/sas_signer.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::portal {
namespace {

using nlohmann::json;

constexpr int kPage = 200;
constexpr size_t kMaxText = 1024;

void volumes(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    std::optional<storage::Account> account = account_of(s.accounts, req, res);
    if (!account) return;
    answered(res, [&] {
        json containers = json::array();
        json shares = json::array();
        storage::ListOptions options;
        do {
            storage::ContainerListPage page = s.blobs.list_containers(account->name, options);
            for (const storage::ContainerInfo& c : page.containers) {
                containers.push_back({{"name", c.name}, {"publicAccess", c.public_access},
                                      {"lastModified", arm::arm_time(c.last_modified)}});
            }
            options.marker = page.next_marker;
        } while (!options.marker.empty() && containers.size() < 5000);
        options = {};
        do {
            storage::SharePage page = s.files.list_shares(account->name, options);
            for (const storage::ShareInfo& share : page.shares) {
                shares.push_back({{"name", share.name}, {"quotaGiB", share.quota_gib},
                                  {"lastModified", arm::arm_time(share.last_modified)}});
            }
            options.marker = page.next_marker;
        } while (!options.marker.empty() && shares.size() < 5000);
        send_json(res, 200, json{{"account", account->name}, {"containers", containers}, {"shares", shares}});
    });
}

void blobs(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    if (!bounded(req, res, {"container", "prefix", "marker"})) return;
    std::optional<storage::Account> account = account_of(s.accounts, req, res);
    if (!account) return;
    const std::string container = param(req, "container");
    answered(res, [&] {
        storage::ListOptions options;
        options.prefix = param(req, "prefix");
        options.marker = param(req, "marker");
        options.delimiter = "/";
        options.max_results = kPage;
        storage::BlobListPage page = s.blobs.list_blobs(account->name, container, options);
        json items = json::array();
        for (const storage::BlobListEntry& e : page.entries) {
            if (e.is_prefix) {
                items.push_back({{"name", e.prefix}, {"directory", true}});
                continue;
            }
            items.push_back({{"name", e.blob.name}, {"directory", false}, {"size", e.blob.size},
                             {"contentType", e.blob.content.content_type}, {"lastModified", arm::arm_time(e.blob.last_modified)},
                             {"downloadUrl", download_url(s.endpoints, *account, true, container, e.blob.name)}});
        }
        send_json(res, 200, json{{"items", items}, {"nextMarker", page.next_marker}});
    });
}

void files(const StorageSources& s, const httplib::Request& req, httplib::Response& res) {
    if (!bounded(req, res, {"share", "path", "marker"})) return;
    std::optional<storage::Account> account = account_of(s.accounts, req, res);
    if (!account) return;
    const std::string share = param(req, "share");
    const std::string path = param(req, "path");
    answered(res, [&] {
        s.files.adopt_disk_changes(account->name, share, path, /*whole_subtree=*/false);
        storage::ListOptions options;
        options.marker = param(req, "marker");
        options.max_results = kPage;
        storage::DirectoryPage page = s.files.list_directory(account->name, share, path, options);
        json items = json::array();
        for (const storage::ShareEntry& e : page.entries) {
            const std::string full = path.empty() ? e.name : path + "/" + e.name;
            json item{{"name", e.name}, {"path", full}, {"directory", e.is_dir}};
            if (!e.is_dir) {
                item["size"] = e.size;
                item["downloadUrl"] = download_url(s.endpoints, *account, false, share, full);
            }
            items.push_back(item);
        }
        send_json(res, 200, json{{"items", items}, {"nextMarker", page.next_marker}});
    });
}

}  // namespace

std::string param(const httplib::Request& req, const char* name) {
    return req.has_param(name) ? req.get_param_value(name) : std::string();
}

// The account named by ?account=, or the error answered.
std::optional<storage::Account> account_of(const storage::AccountRegistry& accounts, const httplib::Request& req,
                                           httplib::Response& res) {
    const std::string name = param(req, "account");
    std::optional<storage::Account> account = name.size() <= 64 ? accounts.find(name) : std::nullopt;
    if (!account) send_portal_error(res, 404, "AccountNotFound", "There is no storage account '" + name.substr(0, 64) + "'.");
    return account;
}

// Checks that the text parameters are within bounds; answers and returns false otherwise.
bool bounded(const httplib::Request& req, httplib::Response& res, std::initializer_list<const char*> names) {
    for (const char* name : names) {
        if (param(req, name).size() > kMaxText) {
            send_portal_error(res, 400, "InvalidParameter",
                   std::string("The parameter ") + name + " is longer than " + std::to_string(kMaxText) + " characters.");
            return false;
        }
    }
    return true;
}

std::string download_url(const endpoints::Endpoints& endpoints, const storage::Account& account, bool blob,
                         const std::string& container, const std::string& path) {
    const auto expiry = time::now() + std::chrono::hours(1);
    return (blob ? endpoints.blob : endpoints.file) + "/" + account.name + "/" +
           storage::encode_url_path(container + "/" + path) + "?" +
           storage::read_sas_query(account, blob ? storage::SasService::blob : storage::SasService::file, container, path,
                                   expiry);
}

void add_storage_routes(http::Routes& routes, const StorageSources& sources) {
    routes.Get("/portal/api/storage/volumes", [sources](const httplib::Request& req, httplib::Response& res) {
        volumes(sources, req, res);
    });
    routes.Get("/portal/api/storage/blobs", [sources](const httplib::Request& req, httplib::Response& res) {
        blobs(sources, req, res);
    });
    routes.Get("/portal/api/storage/files", [sources](const httplib::Request& req, httplib::Response& res) {
        files(sources, req, res);
    });
    add_storage_change_routes(routes, sources);
}

}  // namespace bai::portal
