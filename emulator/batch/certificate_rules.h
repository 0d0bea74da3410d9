// What the Batch service checks in a certificate to add, and what it shows of one: the data
// (a PFX with its password, or a CER) must hold a certificate whose SHA-1 thumbprint is the one
// given; publicData is the certificate's DER, base64.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::batch {

// The stored document of a certificate to add (its secrets under "_": never shown); `now` for
// its state's time. Throws BatchError naming the property.
nlohmann::json new_certificate_document(const nlohmann::json& body, const std::string& now);

// The id a certificate is stored under: ALGORITHM-THUMBPRINT, lower-cased.
std::string certificate_key(const std::string& algorithm, const std::string& thumbprint);

}  // namespace bai::batch
