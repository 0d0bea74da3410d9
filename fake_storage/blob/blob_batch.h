// Blob Batch (POST ?comp=batch): several Delete Blob or Set Blob Tier requests in one
// multipart/mixed body, each authenticated and answered on its own, their answers in one
// multipart/mixed answer.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <httplib.h>

#include "fake_storage/http/storage_endpoint.h"

namespace bai::storage {

// One request of a batch: its Content-ID and the request (target "/ACCOUNT/CONTAINER/BLOB?...").
struct BatchPart {
    std::string content_id;
    httplib::Request request;
};

// The requests of a batch body sent with `content_type` to `account` (and `container`, "" for the
// account): all Delete Blob or all Set Blob Tier, at most 256, of that container when one is named.
// 400 MissingRequiredHeader, InvalidHeaderValue (no boundary), InvalidInput,
// AllBatchSubRequestsShouldBeSameApi, ExceedsMaxBatchRequestCount.
std::vector<BatchPart> parse_batch(std::string_view body, const std::string& content_type, const std::string& account,
                                   const std::string& container);

// Serves one request of the batch (StorageEndpoint::serve_part).
using ServePart = std::function<void(const httplib::Request&, httplib::Response&)>;

// Answers the batch `call` (its body read): 202 with the parts' answers. `container`: the
// container the batch was sent to ("" for the account), the only one its requests may name.
// A body that is not a batch is answered as the service does: one part with the error.
void answer_batch(StorageCall& call, const std::string& container, const ServePart& serve_part);

}  // namespace bai::storage
