// What `bai job validate` adds to the validator: a hint for each error, and warnings for what
// passes the schema but fails or surprises in the cloud: an image without a pinned tag, more
// GPU workers than the vmSize has, output or log paths outside every mount, $AZ_BATCHAI_
// variables the service never sets, scripts that are on no mounted volume.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/validation/validator.h"

namespace bai::cli {

struct LintOptions {
    std::string vm_size;  // the cluster's, when known (--vm-size); empty: no GPU check
};

std::vector<validation::Finding> lint_job(const nlohmann::json& body, const LintOptions& options);

// A short "how to fix it" for a validator finding.
std::string hint_for(const validation::Finding& finding);

}  // namespace bai::cli
