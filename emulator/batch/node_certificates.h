// The certificates a pool references, installed as the service installs them on Linux nodes: in
// the certs directory of each task's directory (AZ_BATCH_CERTIFICATES_DIR), one file per
// certificate named ALGORITHM-THUMBPRINT.FORMAT in lower case (sha1-<hex>.cer: the certificate;
// sha1-<hex>.pfx: the PFX as added, with its password beside it in sha1-<hex>.pfx.pw), for the
// kinds of task its visibility names (starttask, task; all when it names none).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "emulator/batch/entity_store.h"

namespace bai::batch {

// `pool` is the pool's document; `kind` is "starttask" or "task". Makes `dir` (owner-only), and
// writes what is missing there; a reference to a certificate the account no longer has is passed
// over.
void install_certificates(const EntityStore& store, const std::string& account, const nlohmann::json& pool,
                          const std::filesystem::path& dir, const std::string& kind);

}  // namespace bai::batch
