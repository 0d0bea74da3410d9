// The emulator's own routes for the job engine, on the ARM endpoint beside /emulator/endpoints:
//   GET  /emulator/nodes                    every node: cluster, id, address, state, job, GPUs
//   POST /emulator/nodes/{nodeId}/preempt   pre-empts a low-priority node (its job is requeued)
//   PUT    /emulator/shares/{account}/{share}/faults  {"error": "EIO"|"ENOSPC", "operations": K,
//                                                    "stallMs": N}: the next K counted operations of
//                                                    that share's mounts stall N ms and/or fail
//   GET    /emulator/shares/{account}/{share}/faults  what remains of the plan (404 NoFaultPlan)
//   DELETE /emulator/shares/{account}/{share}/faults  clears it (204)
// Errors are {"error": {"code", "message"}}: 404 NodeNotFound, 400 NodeNotLowPriority,
// 400 InvalidFaultPlan (the message names the field), 404 NoFaultPlan.
#pragma once

#include <httplib.h>

#include "common/http/routes.h"

#include "emulator/engine/local_engine.h"

namespace bai::engine {

void add_engine_routes(http::Routes& server, LocalEngine& engine);

}  // namespace bai::engine
