// The development storage account's name, as the tests' stores and requests use it.
#pragma once

#include <string>

#include "fake_storage/accounts/account_registry.h"

namespace bai::testing {

inline const std::string kAcct{storage::kDevAccountName};

}  // namespace bai::testing
