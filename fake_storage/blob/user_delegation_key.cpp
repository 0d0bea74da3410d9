// Get User Delegation Key (POST ?restype=service&comp=userdelegationkey), served to a bearer
// token: a key for user delegation SASes, valid for at most seven days.
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include <chrono>
#include <cstring>

#include "common/crypto/base64.h"
#include "common/text/ascii.h"
#include "common/text/markup_escape.h"
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

// Who the key is for: the oid and tid claims of the bearer token when it is a JWT, else the
// emulator's own identity (the token is not verified: any bearer token is accepted).
std::pair<std::string, std::string> token_identity(const std::string& authorization) {
    std::pair<std::string, std::string> identity{"00000000-0000-0000-0000-0000000000e1",
                                                 "00000000-0000-0000-0000-0000000000e2"};
    const std::string token = std::string(text::trim(std::string_view(authorization).substr(7)));
    const size_t first = token.find('.');
    const size_t second = token.find('.', first + 1);
    if (first == std::string::npos || second == std::string::npos) return identity;
    std::string payload = token.substr(first + 1, second - first - 1);
    for (char& c : payload) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (payload.size() % 4 != 0) payload += '=';
    auto decoded = crypto::base64_decode(payload);
    if (!decoded) return identity;
    auto claims = nlohmann::json::parse(*decoded, nullptr, false);
    if (!claims.is_object()) return identity;
    if (claims.contains("oid") && claims["oid"].is_string()) identity.first = claims["oid"].get<std::string>();
    if (claims.contains("tid") && claims["tid"].is_string()) identity.second = claims["tid"].get<std::string>();
    return identity;
}

}  // namespace

void BlobService::get_user_delegation_key(StorageCall& call) {
    pugi::xml_document doc;
    pugi::xml_parse_result parsed =
        doc.load_buffer(call.body.data(), call.body.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) invalid_xml_document(std::string("Reason:") + parsed.description());
    pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "KeyInfo") != 0) invalid_xml_document("The root element must be KeyInfo.");
    const std::string expiry_text = root.child("Expiry").text().get();
    auto expiry = time::parse_iso8601(expiry_text);
    if (!expiry) invalid_xml_node_value("Expiry", expiry_text);
    const auto now = time::now();
    std::string start_text = root.child("Start").text().get();
    auto start = start_text.empty() ? std::optional(now) : time::parse_iso8601(start_text);
    if (!start) invalid_xml_node_value("Start", start_text);
    if (*expiry <= *start || *expiry > now + std::chrono::hours(24 * 7)) invalid_xml_node_value("Expiry", expiry_text);
    auto [oid, tid] = token_identity(call.request.header("Authorization"));
    // The times as the SDKs write them back into a SAS (whole seconds).
    UserDelegationKey key{oid, tid, time::format_iso8601(*start, 0), time::format_iso8601(*expiry, 0), "b",
                          read_version(call.request)};
    call.response.set_content(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><UserDelegationKey><SignedOid>" + text::markup_escape(key.object_id) +
            "</SignedOid><SignedTid>" + text::markup_escape(key.tenant_id) + "</SignedTid><SignedStart>" + text::markup_escape(key.start) +
            "</SignedStart><SignedExpiry>" + text::markup_escape(key.expiry) + "</SignedExpiry><SignedService>" + key.service +
            "</SignedService><SignedVersion>" + text::markup_escape(key.version) + "</SignedVersion><Value>" +
            user_delegation_key_value(call.account, key) + "</Value></UserDelegationKey>",
        "application/xml");
}

}  // namespace bai::storage
