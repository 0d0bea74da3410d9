// The emulator's own routes for the job engine, on the ARM endpoint beside /emulator/endpoints:
//   GET  /emulator/nodes                    every node: cluster, id, address, state, job, GPUs
//   POST /emulator/nodes/{nodeId}/preempt   pre-empts a low-priority node (its job is requeued)
// Errors are {"error": {"code", "message"}}: 404 NodeNotFound, 400 NodeNotLowPriority.
#pragma once

#include <httplib.h>

#include "emulator/engine/local_engine.h"

namespace bai::engine {

void add_engine_routes(httplib::Server& server, LocalEngine& engine);

}  // namespace bai::engine
