// What the ARM API asks of the job engine. The API owns the resources' documents; the engine
// owns their execution fields (cluster allocationState, currentNodeCount, nodeStateCounts,
// errors; job executionState, executionInfo) and writes them into the ResourceStore itself.
// The hooks of completed operations (created, terminate, deleted) run on the operation worker
// inside the transaction that records the operation Succeeded: what they write to the store
// commits with it, an exception makes the operation Failed and undoes it, and while they run
// every other writer waits, so they hand slow work (starting or killing processes) to the
// engine's own threads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "emulator/arm/resource_store.h"

namespace bai::arm {

class ComputeEngine {
public:
    virtual ~ComputeEngine() = default;
    // A cluster's create operation succeeded / its scaleSettings were changed.
    virtual void cluster_created(const std::string& cluster_id) = 0;
    virtual void cluster_scaled(const std::string& cluster_id) = 0;
    // The cluster's document has been removed (its delete operation, or its workspace's or
    // group's): its nodes go.
    virtual void cluster_deleted(const StoredResource& cluster) = 0;
    // A job's create operation succeeded: it is queued.
    virtual void job_created(const std::string& job_id) = 0;
    // Ends the job as the service did (running -> terminating -> failed with JobTerminated,
    // queued -> failed, completed: unchanged).
    virtual void job_terminate(const std::string& job_id) = 0;
    // The job's document has been removed: its processes are killed.
    virtual void job_deleted(const StoredResource& job) = 0;
    // A file server's document has been removed: its disk goes (the clusters that still mount
    // it see an empty, deleted directory, as NFS clients of a deleted server see a stale mount).
    virtual void file_server_deleted(const StoredResource& file_server) = 0;
    // {"nodeId","ipAddress","port"} of the cluster's nodes, or of the nodes that ran the job.
    virtual nlohmann::json remote_login(const StoredResource& cluster_or_job) = 0;
    // Cores in use in a location: {"dedicated": N, "lowPriority": M}.
    // {"dedicated": N, "lowPriority": N, "byVmSize": {"Standard_D1": {"dedicated": N, "lowPriority": N}}}
    virtual nlohmann::json cores_in_use(const std::string& location) = 0;
};

}  // namespace bai::arm
