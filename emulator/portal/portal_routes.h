// The portal: the emulator seen in a browser, at /portal on the ARM endpoint (its certificate).
// The page, its script and its style are compiled into the binary (portal/static/); nothing loads
// from elsewhere (the page's Content-Security-Policy allows only this origin). The page reads
// JSON views made for it under /portal/api/: the overview, the ARM resources by kind (filtered,
// searched, paged), one resource (its document redacted as ARM's GET redacts it), and a job's output
// files (listed, and read from an offset, so that the page follows a log as it grows). Every value
// reaches the page as JSON and is put in as text, never as markup.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/endpoints/endpoints_file.h"
#include "common/http/routes.h"
#include "emulator/arm/resource_store.h"
#include "emulator/portal/portal_node_logs.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/file_store.h"

namespace bai::portal {

struct PortalSources {
    arm::ResourceStore& resources;
    const storage::AccountRegistry& accounts;
    endpoints::Endpoints endpoints;
    std::filesystem::path location;  // the data directory
    // The job engine's nodes (LocalEngine::nodes(): cluster, clusterKey, nodeId, state, job, ...);
    // none when empty.
    std::function<nlohmann::json()> nodes;
    // What a cluster's nodes or a job lived through (EngineHistory: of_cluster, of_job), by the
    // resource's kind and key; none when empty.
    std::function<nlohmann::json(const std::string& kind, const std::string& key)> history;
    // Where a job's last run wrote its stdout and stderr on a node's own disk
    // (LocalEngine::stdouterr_directory), by the job's key; none when empty.
    std::function<std::optional<NodeLogsPlace>(const std::string& job_key)> node_logs;
    // Where jobs' output directories are read from (a job's stdout.txt followed by the page).
    storage::FileStore* files = nullptr;
    storage::BlobStore* blobs = nullptr;
};

// With `enabled` false (--strict-auth: the API wants signed tokens, and the portal has no sign-in
// yet), every portal path answers 403 saying so.
void add_portal_routes(http::Routes& routes, const PortalSources& sources, bool enabled);

}  // namespace bai::portal
