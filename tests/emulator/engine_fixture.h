// The job engine on its own (no HTTP), for tests: a store, the storage engines with share
// "jobs", a cluster document, jobs written straight into the store and announced to the engine
// as the ARM API's worker would, and polling with a deadline.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "emulator/arm/arm_api.h"
#include "emulator/engine/local_engine.h"
#include "fake_storage/engine/storage_schema.h"
#include "tests/common/test_dir.h"

namespace bai::engine::testing {

using nlohmann::json;

const std::string kWorkspace = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws";
const std::string kCluster = kWorkspace + "/clusters/c";
const std::string kExperiment = kWorkspace + "/experiments/e";

class EngineFixture : public ::testing::Test {
protected:
    void SetUp() override {
        db = db::Database::open(dir / "state.db");
        storage::migrate_storage_schema(*db);
        arm::ArmApi::migrate(*db);
        content = std::make_unique<storage::ContentFiles>(dir / "storage", false);
        files = std::make_unique<storage::FileStore>(*db, *content);
        blobs = std::make_unique<storage::BlobStore>(*db, *content);
        files->create_share("devstoreaccount1", "jobs", std::nullopt, {});
        store = std::make_unique<arm::ResourceStore>(*db);
    }
    void TearDown() override {
        if (engine) engine->stop();
    }

    void start(int nodes, Clock* clock = nullptr, DeclaredWorkloads* workloads = nullptr,
               const std::string& priority = "dedicated") {
        create_cluster(nodes, priority);
        EngineOptions options;
        options.nodes_dir = dir / "nodes";
        options.clock = clock;
        options.workloads = workloads;
        engine = std::make_unique<LocalEngine>(*store, StorageAccess{*files, *blobs, *content, content->temporary_dir(), {}}, options);
        engine->start();
        engine->cluster_created(kCluster);
    }

    void create_cluster(int nodes, const std::string& priority = "dedicated") {
        json mounts{{"azureFileShares",
                     {{{"azureFileUrl", "https://devstoreaccount1.file.core.windows.net/jobs"}, {"relativeMountPath", "afs"}}}}};
        json cluster{{"id", kCluster},
                     {"name", "c"},
                     {"properties",
                      {{"vmSize", "STANDARD_D1"},
                       {"vmPriority", priority},
                       {"scaleSettings", {{"manual", {{"targetNodeCount", nodes}}}}},
                       {"nodeSetup", {{"mountVolumes", mounts}}}}}};
        ASSERT_TRUE(store->create(kCluster, kWorkspace, "cluster", cluster));
    }

    std::string add_job(const std::string& name, const std::string& command, const std::string& wall_clock = "P7D") {
        std::string id = kExperiment + "/jobs/" + name;
        json job{{"id", id},
                 {"name", name},
                 {"properties",
                  {{"cluster", {{"id", kCluster}}},
                   {"nodeCount", 1},
                   {"executionState", "queued"},
                   {"constraints", {{"maxWallClockTime", wall_clock}}},
                   {"stdOutErrPathPrefix", "$AZ_BATCHAI_MOUNT_ROOT/afs"},
                   {"jobOutputDirectoryPathSegment", std::string("seg/").append(name)},
                   {"customToolkitSettings", {{"commandLine", command}}}}}};
        EXPECT_TRUE(store->create(id, kExperiment, "job", job));
        engine->job_created(id);
        return id;
    }

    std::string state(const std::string& id) {
        auto job = store->get(id);
        return job ? job->body["properties"].value("executionState", "") : "gone";
    }

    bool wait_for(const std::function<bool()>& done, int seconds = 30) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
        while (std::chrono::steady_clock::now() < deadline) {
            if (done()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }

    bai::testing::TestDir dir;
    std::unique_ptr<db::Database> db;
    std::unique_ptr<storage::ContentFiles> content;
    std::unique_ptr<storage::FileStore> files;
    std::unique_ptr<storage::BlobStore> blobs;
    std::unique_ptr<arm::ResourceStore> store;
    std::unique_ptr<VirtualClock> clock;  // outlives the engine (stopped in TearDown)
    std::unique_ptr<LocalEngine> engine;
};

}  // namespace bai::engine::testing
