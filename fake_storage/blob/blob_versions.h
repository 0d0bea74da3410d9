// What a Blob request says about versions, and what its answer says of them: the `versionid`
// query parameter (a version's reads, tags, tiers and Delete Blob), x-ms-version-id on the writes
// that make a version, and x-ms-version-id with x-ms-is-current-version on reads. Versions are
// named in answers from x-ms-version 2019-10-10 on, the version that brought them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fake_storage/engine/blob_store.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

// A version id as the service writes it ("2020-04-30T17:50:39.2181765Z": a UTC time with seven
// digits of fraction); nullopt for anything else.
std::optional<std::string> parse_version_id(std::string_view value);

// The store's key for what the request names: "" (the blob), a snapshot's time (`snapshot`), or a
// version's key (`versionid`). 400 InvalidQueryParameterValue for a malformed version id, and for
// a snapshot and a version named together.
std::string blob_target(const StorageRequest& request);
bool names_version(const StorageRequest& request);

// x-ms-version-id of a write (when it made a version).
void answer_version_id(const StorageRequest& request, httplib::Response& response, const std::string& version_id);
// x-ms-version-id and x-ms-is-current-version of a read of a versioned blob or of one version.
void answer_version_of(const StorageRequest& request, httplib::Response& response, const BlobInfo& blob);

}  // namespace bai::storage
