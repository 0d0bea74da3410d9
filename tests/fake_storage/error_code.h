// "STATUS CODE" of the StorageError a call throws, or "no error": one string to compare.
#pragma once

#include <functional>
#include <string>

#include "fake_storage/engine/storage_error.h"

namespace bai::storage::testing {

inline std::string code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const StorageError& e) {
        return std::to_string(e.status()) + " " + e.code();
    }
    return "no error";
}

}  // namespace bai::storage::testing
