// The stored access policies of Get/Set Container ACL:
// <SignedIdentifiers><SignedIdentifier><Id/><AccessPolicy><Start/><Expiry/><Permission/>
// </AccessPolicy></SignedIdentifier>...</SignedIdentifiers>.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fake_storage/engine/blob_store.h"

namespace bai::storage {

// An empty body is no policy. 400 InvalidXmlDocument for what is not that document or names more
// than five policies or one twice; 400 InvalidXmlNodeValue for an id longer than 64 characters,
// a time that is not ISO 8601 or a permission letter the service does not know.
std::vector<SignedIdentifier> parse_signed_identifiers(std::string_view body);
std::string signed_identifiers_xml(const std::vector<SignedIdentifier>& identifiers);

}  // namespace bai::storage
