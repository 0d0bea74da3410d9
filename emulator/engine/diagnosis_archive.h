// The diagnosis archive the service left beside a job's logs when the job ended
// (`diagnosis-tvmps_<64 hex>_d.zip` in stdouterr, recorded in December 2019 and 2021; the hex
// named the cluster's pool: every job of a cluster had the same). The cloud's held its node
// agent's logs; the emulator's holds the job's own logs, so that a client that fetches it gets a
// real zip of something useful.
#pragma once

#include <filesystem>
#include <string>

namespace bai::engine {

// diagnosis-tvmps_<hex>_d.zip, the hex derived from `pool` (the cluster's key).
std::string diagnosis_archive_name(const std::string& pool);

// Writes the archive into `directory`: a zip (stored, not compressed) of the regular files there
// but archives, each cut to its last 64 KiB so that the archive stays small. Returns its path.
std::filesystem::path write_diagnosis_archive(const std::filesystem::path& directory, const std::string& pool);

}  // namespace bai::engine
