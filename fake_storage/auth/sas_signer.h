// Issuing read-only service SAS tokens, as the service did for the downloadUrl of a job's
// output files. verify_sas() accepts what this signs.
#pragma once

#include <string>

#include "common/time/timestamps.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/auth/sas.h"

namespace bai::storage {

// "sv=...&sr=f&sp=r&se=...&sig=..." for reading one file (file service) or blob (blob service)
// until `expiry`. `name` is the file path or blob name, not URL-encoded.
std::string read_sas_query(const Account& account, SasService service, const std::string& container,
                           const std::string& name, time::TimePoint expiry);

// The same for a container or share (`name` empty) or one of its blobs or files, with the SAS
// permissions `permissions` in the service's order ("racwdl").
std::string service_sas_query(const Account& account, SasService service, const std::string& container,
                              const std::string& name, const std::string& permissions, time::TimePoint expiry);

// Percent-encodes a path for a URL, keeping '/'.
std::string encode_url_path(const std::string& path);

}  // namespace bai::storage
