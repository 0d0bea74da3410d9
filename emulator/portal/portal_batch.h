// The portal's Azure Batch pages read the Batch API itself, answered in this process by its routes
// as a client's request would be (a bearer token, the account in the path): pools, their nodes
// (with their start task's state), jobs, their tasks (state, retries, requeues), and the files of
// a task or a node (stdout.txt, stderr.txt, the start task's), read-only.
//   GET /portal/api/batch/accounts                 {"accounts": [NAME...]}
//   GET /portal/api/batch/read?account=&path=P     {"status", "answer"}: the Batch API's JSON for P, one of
//       /pools, /pools/ID, /pools/ID/nodes, /pools/ID/nodes/ID, /jobs, /jobs/ID, /jobs/ID/tasks,
//       /jobs/ID/tasks/ID; or {"status", "text", "truncated"} for /jobs/ID/tasks/ID/files/PATH and
//       /pools/ID/nodes/ID/files/PATH (the first MiB of the file, decoded as UTF-8). The Batch API's
//       refusals come back as the portal's errors with its code and message (404 PoolNotFound...).
#pragma once

#include <httplib.h>

#include <functional>
#include <string>

#include "common/http/routes.h"
#include "emulator/batch/batch_account.h"

namespace bai::portal {

struct BatchSources {
    const http::Routes& batch;  // the Batch endpoint's routes
    const batch::BatchAccountRegistry& accounts;
    std::function<void(httplib::Request&)> path_rewrite;  // the endpoint's (the account off the path)
    std::string host;                                      // HOST:PORT of the Batch endpoint
};

void add_batch_routes(http::Routes& routes, const BatchSources& sources);

}  // namespace bai::portal
