#include "fake_storage/http/container_acl_xml.h"

#include <pugixml.hpp>

#include <cstring>

#include "common/text/markup_escape.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

// The permission letters of a container's policy, in the order the service writes them.
constexpr std::string_view kPolicyLetters = "racwdxyltmeopi";

}  // namespace

std::vector<SignedIdentifier> parse_signed_identifiers(std::string_view body) {
    std::vector<SignedIdentifier> out;
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return out;
    pugi::xml_document doc;
    pugi::xml_parse_result parsed = doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) invalid_xml_document(std::string("Reason:") + parsed.description());
    pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "SignedIdentifiers") != 0) invalid_xml_document("The root element must be SignedIdentifiers.");
    for (pugi::xml_node node : root.children()) {
        if (node.type() != pugi::node_element) continue;
        if (std::strcmp(node.name(), "SignedIdentifier") != 0) {
            invalid_xml_document("Unexpected element " + std::string(node.name()) + ".");
        }
        SignedIdentifier identifier;
        identifier.id = node.child("Id").text().get();
        if (identifier.id.empty()) invalid_xml_document("A SignedIdentifier must have an Id.");
        if (identifier.id.size() > 64) invalid_xml_node_value("Id", identifier.id);
        for (const SignedIdentifier& seen : out) {
            if (seen.id == identifier.id) invalid_xml_document("The Id " + identifier.id + " is given twice.");
        }
        pugi::xml_node policy = node.child("AccessPolicy");
        auto time_of = [&](const char* name) -> std::optional<time::TimePoint> {
            pugi::xml_node element = policy.child(name);
            if (!element || std::string_view(element.text().get()).empty()) return std::nullopt;
            auto t = time::parse_iso8601(element.text().get());
            if (!t) invalid_xml_node_value(name, element.text().get());
            return t;
        };
        identifier.start = time_of("Start");
        identifier.expiry = time_of("Expiry");
        identifier.permission = policy.child("Permission").text().get();
        for (char c : identifier.permission) {
            if (kPolicyLetters.find(c) == std::string_view::npos) invalid_xml_node_value("Permission", identifier.permission);
        }
        out.push_back(std::move(identifier));
        if (out.size() > kMaxSignedIdentifiers) invalid_xml_document("A container has at most 5 stored access policies.");
    }
    return out;
}

std::string signed_identifiers_xml(const std::vector<SignedIdentifier>& identifiers) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>";
    for (const SignedIdentifier& i : identifiers) {
        std::string policy;
        if (i.start) policy += "<Start>" + time::format_iso8601(*i.start, 7) + "</Start>";
        if (i.expiry) policy += "<Expiry>" + time::format_iso8601(*i.expiry, 7) + "</Expiry>";
        if (!i.permission.empty()) policy += "<Permission>" + text::markup_escape(i.permission) + "</Permission>";
        // An identifier with nothing in its policy is listed without one (recorded).
        xml += "<SignedIdentifier><Id>" + text::markup_escape(i.id) + "</Id>";
        if (!policy.empty()) xml += "<AccessPolicy>" + policy + "</AccessPolicy>";
        xml += "</SignedIdentifier>";
    }
    return xml + "</SignedIdentifiers>";
}

}  // namespace bai::storage
