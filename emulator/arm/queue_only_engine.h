// The engine the API runs with until the job engine lands: clusters get no nodes, jobs stay
// queued, and terminate moves a queued job to failed with JobTerminated, as the service did.
#pragma once

#include "emulator/arm/compute_engine.h"

namespace bai::arm {

class QueueOnlyEngine : public ComputeEngine {
public:
    explicit QueueOnlyEngine(ResourceStore& store) : store_(store) {}
    void cluster_created(const std::string&) override {}
    void cluster_scaled(const std::string&) override {}
    void cluster_deleted(const StoredResource&) override {}
    void job_created(const std::string&) override {}
    void job_terminate(const std::string& job_id) override;
    void job_deleted(const StoredResource&) override {}
    void file_server_deleted(const StoredResource&) override {}
    nlohmann::json remote_login(const StoredResource&) override { return nlohmann::json::array(); }
    nlohmann::json cores_in_use(const std::string&) override { return {{"dedicated", 0}, {"lowPriority", 0}}; }

private:
    ResourceStore& store_;
};

}  // namespace bai::arm
