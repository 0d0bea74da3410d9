// Blob Batch (POST ?comp=batch): several Delete Blob or Set Blob Tier requests in one
// multipart/mixed body, each authenticated and answered on its own, their answers in one
// multipart/mixed answer.
#pragma once

#include <functional>
#include <string>

#include <httplib.h>

#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

// Serves one request of the batch (StorageEndpoint::serve_part).
using ServePart = std::function<void(const httplib::Request&, httplib::Response&)>;

// Answers the batch `call` (its body read): 202 with the parts' answers. `container`: the
// container the batch was sent to ("" for the account), the only one its requests may name.
// A body that is not a batch is answered as the service does: one part with the error.
void answer_batch(StorageCall& call, const std::string& container, const ServePart& serve_part);

}  // namespace bai::storage
