// The Batch service's SharedKey scheme ("Authorization: SharedKey ACCOUNT:SIGNATURE"), which
// differs from the storage services': the method, eleven standard headers, the ocp-* headers
// sorted, "/ACCOUNT" and the path as sent, then each query parameter ("\nname:value", names
// sorted, values decoded, empty ones left out), signed with HMAC-SHA256 of the account key.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

#include "emulator/batch/batch_account.h"

namespace bai::batch {

std::string batch_string_to_sign(const httplib::Request& request, const std::string& account);

// The account the request is signed for. Throws BatchError: 401 without an Authorization header,
// 403 AuthenticationFailed for an unknown account or a signature by neither of its keys (the message shows the
// string the emulator signed, to compare with the client's).
BatchAccount authenticate(const httplib::Request& request, const BatchAccountRegistry& accounts);

}  // namespace bai::batch
