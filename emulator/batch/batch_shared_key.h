// The Batch service's SharedKey scheme ("Authorization: SharedKey ACCOUNT:SIGNATURE"), which
// differs from the storage services': the method, eleven standard headers, the ocp-* headers
// sorted, "/ACCOUNT" and the path as sent, then each query parameter ("\nname:value", names
// sorted, values decoded, empty ones left out), signed with HMAC-SHA256 of the account key.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

#include "emulator/batch/batch_account.h"
#include "emulator/batch/batch_error.h"

namespace bai::batch {

// 403 AuthenticationFailed with the service's message and `detail` as AuthenticationErrorDetail.
BatchError authentication_failed(const std::string& detail);

std::string batch_string_to_sign(const httplib::Request& request, const std::string& account);

// The account a "SharedKey ACCOUNT:SIGNATURE" request is signed for. Throws BatchError:
// 403 AuthenticationFailed for a malformed header, an unknown account or a signature by neither of its keys (the message shows the
// string the emulator signed, to compare with the client's).
BatchAccount check_shared_key(const httplib::Request& request, const BatchAccountRegistry& accounts);

}  // namespace bai::batch
