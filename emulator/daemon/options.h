// The command line of batchai-emulator.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/http/loopback.h"
#include "emulator/engine/container_runtime.h"
#include "emulator/engine/gpu_inventory.h"
#include "emulator/engine/slurm_sizes.h"
#include "emulator/batch/app_packages.h"
#include "emulator/batch/batch_account.h"
#include "emulator/identity/service_principals.h"
#include "fake_storage/accounts/account_registry.h"

namespace bai::daemon {

struct Options {
    std::filesystem::path location = "batchai-data";
    std::string host = "127.0.0.1";
    // Listen on every address of the network namespace while publishing `host`'s URLs: in a
    // container whose ports are published (the image sets it), the engine's port forwarding
    // reaches the container's own address, never its loopback. Refused outside a container.
    bool bind_all = false;
    // The address the listeners bind: `host`, or every address under --bind-all.
    std::string listen_address() const { return bind_all ? "0.0.0.0" : host; }
    // The name clients reach the endpoints by, where it is not `host` (a CI service's alias): the
    // URLs the emulator hands out name it, and ARM's certificate covers it. Empty: `host`.
    std::string public_host;
    std::string url_host() const { return public_host.empty() ? host : public_host; }
    int arm_port = 10443;
    int blob_port = 10000;
    int file_port = 10004;
    int batch_port = 10447;  // the Azure Batch service
    int proxy_port = 10080;  // the proxy front door for Azure's host names
    std::vector<storage::Account> accounts;
    std::vector<batch::BatchAccount> batch_accounts;  // besides devbatchaccount1
    std::vector<batch::AppPackage> batch_applications;  // --batch-application
    std::vector<identity::ServicePrincipal> service_principals;  // besides the well-known one
    // ARM takes only tokens the emulator's sign-in service issued (by default any bearer token).
    bool strict_auth = false;
    std::optional<std::filesystem::path> debug_log;
    // fsync content and the SQLite WAL at every commit (power-loss safety); without it every
    // acknowledged write survives a crash of the emulator (kill -9) but not of the machine.
    bool durable = false;
    // The data directory is this process's alone while it runs (a replay's): its database takes
    // no file lock per statement (SQLite's exclusive locking mode) and checkpoints in the commit
    // that fills its log instead of on a connection of its own. Not a flag: nothing else may
    // then read state.db while the emulator runs.
    bool sole_user = false;
    // How long a long-running ARM operation (create, delete, terminate) stays InProgress.
    int lro_delay_ms = 500;
    // How long an auto-scale cluster with no queued or running job keeps its nodes.
    int autoscale_idle_ms = 10000;
    // Where the nodes' GPUs come from: the machine's (NVML), none, or fake ones.
    engine::GpuSource gpus;
    // Nodes that cannot have every GPU of their size are not allocated (instead of running with fewer).
    bool strict_gpus = false;
    bool share_passthrough = true;  // --no-passthrough turns it off
    bool bind_shares = false;       // --share-mounts bind
    // --compute slurm: the clusters' nodes are Slurm allocations (emulator/engine/slurm.md), with
    // --slurm-partition, --slurm-account, --slurm-partition-lowpriority, --slurm-qos-lowpriority.
    bool slurm = false;
    std::string slurm_partition;
    std::string slurm_account;
    std::string slurm_lowpriority_partition;
    std::string slurm_lowpriority_qos;
    engine::SizeMap slurm_sizes;  // --slurm-size-map FILE
    // --slurm-storage rest: the hosts do not see the data directory: a node's directories are
    // copied to its host, shares mounted there by bai-sharefuse (emulator/engine/slurm.md).
    bool slurm_rest_storage = false;
    // --slurm-blob-endpoint, --slurm-file-endpoint: the Blob and File endpoints as the hosts reach
    // them (http(s)://HOST:PORT of a proxy the site runs in front of this machine's loopback
    // endpoints); "": the endpoints as published.
    std::string slurm_blob_endpoint;
    std::string slurm_file_endpoint;
    // Where jobs with containerSettings run: --container-runtime, --image IMAGE=DIR, --strict-images.
    engine::ContainerOptions containers;
    bool show_version = false;
    bool show_help = false;
};

// Throws std::invalid_argument with a one-line message naming the offending flag.
Options parse_options(const std::vector<std::string>& args);

// Loopback only (--host): 127.0.0.0/8, ::1 or localhost.
using http::is_loopback_host;

std::string usage();

}  // namespace bai::daemon
