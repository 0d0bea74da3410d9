// How the 2018-05-01 API shows its resources: as the service answered in its latest recordings
// (2021). The fields the service derived when it answered are derived here, from the stored
// document, so that what is stored stays one model for every API version.
#pragma once

#include <nlohmann/json.hpp>

#include "emulator/arm/resource_store.h"

namespace bai::arm {

// A workspace as a GET or a list shows it: with its `etag` (July 2021; the PUT's answer had none,
// and redacted_view is that answer).
nlohmann::json workspace_view(const StoredResource& stored);
// A cluster: its `etag` (July 2021) and an empty imageReference.minVersion (July 2021, whatever
// image the cluster was given).
nlohmann::json cluster_view(const StoredResource& stored);
// A job: once it has left the queue, the cluster's `vmSize` and its cores per node
// (`coreCountPerNode`, 0 while queued), and `executionInfo.totalJobNodeHours` (February 2021).
nlohmann::json job_view(const StoredResource& stored);

// The hidden field of a job's document that keeps its cluster's VM size from its creation, so that
// the job shows it after the cluster has gone.
inline constexpr const char* kJobVmSize = "_vmSize";

}  // namespace bai::arm
