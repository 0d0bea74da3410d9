// Signs a scenario's Blob, File and Batch requests with SharedKey, as the SDKs do, so that a
// scenario writes `request PUT file /devstoreaccount1/share/dir/f` without an Authorization header
// (Blob and File: storage::sign_shared_key).
#pragma once

#include <httplib.h>

#include <string>

#include "fake_storage/auth/shared_key_signer.h"

namespace bai::scenarios {

// Adds ocp-date, Content-Length and Authorization to `request` for the Batch service's SharedKey
// scheme (its own string to sign).
void sign_batch_shared_key(httplib::Request& request, const std::string& account, const std::string& base64_key);

}  // namespace bai::scenarios
