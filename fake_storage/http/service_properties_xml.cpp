#include "fake_storage/http/service_properties_xml.h"

#include <pugixml.hpp>

#include <cctype>
#include <charconv>
#include <cstring>
#include <set>

#include "common/text/ascii.h"
#include "common/text/markup_escape.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {
namespace {

using nlohmann::json;

constexpr size_t kMaxCorsRules = 5;
constexpr size_t kMaxCorsOrigins = 64;
constexpr size_t kMaxCorsHeaders = 64;  // defined headers, per list
constexpr size_t kMaxCorsPrefixes = 2;  // prefixed headers ("x-ms-meta-*"), per list
constexpr size_t kMaxCorsHeaderLength = 256;

pugi::xml_node required(pugi::xml_node parent, const char* name) {
    pugi::xml_node node = parent.child(name);
    if (!node) invalid_xml_document(std::string("Element ") + parent.name() + " lacks its " + name + ".");
    return node;
}

bool boolean(pugi::xml_node node) {
    std::string value = text::lower(text::trim(node.text().get()));
    if (value == "true") return true;
    if (value == "false") return false;
    invalid_xml_node_value(node.name(), node.text().get());
}

long long integer(pugi::xml_node node, long long low, long long high) {
    std::string value(text::trim(node.text().get()));
    long long n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || n < low || n > high) {
        invalid_xml_node_value(node.name(), value);
    }
    return n;
}

// RetentionPolicy: Enabled, and Days (1 to 365) when enabled.
json retention_policy(pugi::xml_node node) {
    json out{{"Enabled", boolean(required(node, "Enabled"))}};
    if (out["Enabled"].get<bool>()) out["Days"] = integer(required(node, "Days"), 1, 365);
    return out;
}

std::string version_of(pugi::xml_node parent) {
    pugi::xml_node node = required(parent, "Version");
    std::string value(text::trim(node.text().get()));
    if (value != "1.0" && value != "2.0") invalid_xml_node_value("Version", value);
    return value;
}

json logging(pugi::xml_node node) {
    return {{"Version", version_of(node)},
            {"Delete", boolean(required(node, "Delete"))},
            {"Read", boolean(required(node, "Read"))},
            {"Write", boolean(required(node, "Write"))},
            {"RetentionPolicy", retention_policy(required(node, "RetentionPolicy"))}};
}

json metrics(pugi::xml_node node) {
    json out{{"Version", version_of(node)}, {"Enabled", boolean(required(node, "Enabled"))}};
    // IncludeAPIs is required of enabled metrics only, and said only of them.
    if (out["Enabled"].get<bool>()) out["IncludeAPIs"] = boolean(required(node, "IncludeAPIs"));
    out["RetentionPolicy"] = retention_policy(required(node, "RetentionPolicy"));
    return out;
}

// A comma-separated list of header names and prefixes ("x-ms-meta-*"), within the service's limits.
std::string header_list(pugi::xml_node node) {
    std::string value(node.text().get());
    size_t defined = 0, prefixed = 0;
    for (const std::string& item : text::split_list(value)) {
        if (item.size() > kMaxCorsHeaderLength) invalid_xml_node_value(node.name(), value);
        (item.back() == '*' ? prefixed : defined) += 1;
    }
    if (defined > kMaxCorsHeaders || prefixed > kMaxCorsPrefixes) invalid_xml_node_value(node.name(), value);
    return value;
}

json cors_rule(pugi::xml_node node) {
    static const std::set<std::string> kMethods = {"DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH"};
    json rule;
    const std::string origin_list = required(node, "AllowedOrigins").text().get();
    const size_t origins = text::split_list(origin_list).size();
    if (origins == 0 || origins > kMaxCorsOrigins) invalid_xml_node_value("AllowedOrigins", origin_list);
    rule["AllowedOrigins"] = origin_list;

    // Each item one of the methods; an empty item (",GET") is no method either.
    const std::string method_list = required(node, "AllowedMethods").text().get();
    for (size_t start = 0; start <= method_list.size();) {
        size_t end = method_list.find(',', start);
        if (end == std::string::npos) end = method_list.size();
        if (!kMethods.contains(std::string(text::trim(std::string_view(method_list).substr(start, end - start))))) {
            invalid_xml_node_value("AllowedMethods", method_list);
        }
        start = end + 1;
    }
    rule["AllowedMethods"] = method_list;
    rule["MaxAgeInSeconds"] = integer(required(node, "MaxAgeInSeconds"), 0, 2147483647);
    // Both header lists may be empty (or absent): the rule then allows or exposes none.
    rule["ExposedHeaders"] = node.child("ExposedHeaders") ? header_list(node.child("ExposedHeaders")) : "";
    rule["AllowedHeaders"] = node.child("AllowedHeaders") ? header_list(node.child("AllowedHeaders")) : "";
    return rule;
}

json delete_retention(pugi::xml_node node) {
    json out{{"Enabled", boolean(required(node, "Enabled"))}};
    if (out["Enabled"].get<bool>()) out["Days"] = integer(required(node, "Days"), 1, 365);
    if (pugi::xml_node allow = node.child("AllowPermanentDelete")) out["AllowPermanentDelete"] = boolean(allow);
    return out;
}

json static_website(pugi::xml_node node) {
    json out{{"Enabled", boolean(required(node, "Enabled"))}};
    for (const char* name : {"IndexDocument", "ErrorDocument404Path", "DefaultIndexDocumentPath"}) {
        if (pugi::xml_node child = node.child(name)) out[name] = child.text().get();
    }
    return out;
}

std::string property_element(const char* name, const std::string& value) {
    return std::string("<") + name + ">" + text::markup_escape(value) + "</" + name + ">";
}
std::string property_element(const char* name, bool value) { return property_element(name, std::string(value ? "true" : "false")); }

std::string retention_xml(const json& r) {
    std::string xml = "<RetentionPolicy>" + property_element("Enabled", r.value("Enabled", false));
    if (r.contains("Days")) xml += property_element("Days", std::to_string(r["Days"].get<long long>()));
    return xml + "</RetentionPolicy>";
}

std::string metrics_xml(const char* name, const json& m) {
    std::string xml = std::string("<") + name + ">" + property_element("Version", m.value("Version", std::string("1.0"))) +
                      property_element("Enabled", m.value("Enabled", false));
    if (m.contains("IncludeAPIs")) xml += property_element("IncludeAPIs", m["IncludeAPIs"].get<bool>());
    return xml + retention_xml(m.value("RetentionPolicy", json::object())) + "</" + name + ">";
}

// The document's root, StorageServiceProperties (400 InvalidXmlDocument otherwise).
pugi::xml_node properties_root(pugi::xml_document& doc, std::string_view xml) {
    pugi::xml_parse_result parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!parsed) invalid_xml_document(std::string("Reason:") + parsed.description());
    pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "StorageServiceProperties") != 0) {
        invalid_xml_document("The root element must be StorageServiceProperties.");
    }
    return root;
}

// The elements both services keep: HourMetrics, MinuteMetrics and Cors.
void read_metrics_and_cors(pugi::xml_node root, json& out) {
    if (pugi::xml_node n = root.child("HourMetrics")) out["HourMetrics"] = metrics(n);
    if (pugi::xml_node n = root.child("MinuteMetrics")) out["MinuteMetrics"] = metrics(n);
    if (pugi::xml_node n = root.child("Cors")) {
        json rules = json::array();
        for (pugi::xml_node rule : n.children()) {
            if (rule.type() != pugi::node_element) continue;
            if (std::strcmp(rule.name(), "CorsRule") != 0) invalid_xml_document(std::string("Unexpected element ") + rule.name() + " in Cors.");
            rules.push_back(cors_rule(rule));
        }
        // The service answers more than five rules as a document it cannot read (recorded).
        if (rules.size() > kMaxCorsRules) invalid_xml_document("Cors has " + std::to_string(rules.size()) + " rules (at most 5).");
        out["Cors"] = rules;
    }
}

std::string metrics_and_cors_xml(const json& p) {
    std::string xml;
    if (p.contains("HourMetrics")) xml += metrics_xml("HourMetrics", p["HourMetrics"]);
    if (p.contains("MinuteMetrics")) xml += metrics_xml("MinuteMetrics", p["MinuteMetrics"]);
    xml += "<Cors>";
    for (const json& rule : p.value("Cors", json::array())) {
        xml += "<CorsRule>" + property_element("AllowedMethods", rule.value("AllowedMethods", std::string())) +
               property_element("AllowedOrigins", rule.value("AllowedOrigins", std::string())) +
               property_element("AllowedHeaders", rule.value("AllowedHeaders", std::string())) +
               property_element("ExposedHeaders", rule.value("ExposedHeaders", std::string())) +
               property_element("MaxAgeInSeconds", std::to_string(rule.value("MaxAgeInSeconds", 0LL))) + "</CorsRule>";
    }
    return xml + "</Cors>";
}

// ProtocolSettings/SMB: Multichannel's Enabled (required when Multichannel is sent), and the
// security settings' lists (Versions, AuthenticationMethods, KerberosTicketEncryption,
// ChannelEncryption: items separated by ';'), kept as sent.
json protocol_settings(pugi::xml_node node) {
    json out = json::object();
    if (pugi::xml_node smb = node.child("SMB")) {
        json s = json::object();
        if (pugi::xml_node multichannel = smb.child("Multichannel")) {
            s["Multichannel"] = {{"Enabled", boolean(required(multichannel, "Enabled"))}};
        }
        for (const char* name : {"Versions", "AuthenticationMethods", "KerberosTicketEncryption", "ChannelEncryption"}) {
            if (pugi::xml_node child = smb.child(name)) s[name] = std::string(text::trim(child.text().get()));
        }
        out["SMB"] = s;
    }
    return out;
}

}  // namespace

json default_blob_service_properties() {
    // A new StorageV2 account: no logging, hour metrics on for 7 days, no CORS rules.
    return {{"Logging",
             {{"Version", "1.0"}, {"Delete", false}, {"Read", false}, {"Write", false},
              {"RetentionPolicy", {{"Enabled", false}}}}},
            {"HourMetrics",
             {{"Version", "1.0"}, {"Enabled", true}, {"IncludeAPIs", true},
              {"RetentionPolicy", {{"Enabled", true}, {"Days", 7}}}}},
            {"MinuteMetrics", {{"Version", "1.0"}, {"Enabled", false}, {"RetentionPolicy", {{"Enabled", false}}}}},
            {"Cors", json::array()},
            {"DeleteRetentionPolicy", {{"Enabled", false}}},
            {"StaticWebsite", {{"Enabled", false}}}};
}

json parse_blob_service_properties(std::string_view xml) {
    pugi::xml_document doc;
    pugi::xml_node root = properties_root(doc, xml);
    json out = json::object();
    if (pugi::xml_node n = root.child("Logging")) out["Logging"] = logging(n);
    read_metrics_and_cors(root, out);
    if (pugi::xml_node n = root.child("DefaultServiceVersion")) {
        std::string version(text::trim(n.text().get()));
        // A service version is a date, YYYY-MM-DD, of 2009-09-19 or later.
        bool shaped = version.size() == 10 && version[4] == '-' && version[7] == '-';
        for (size_t i = 0; shaped && i < version.size(); ++i) {
            if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(version[i]))) shaped = false;
        }
        if (!shaped || version < "2009-09-19") invalid_xml_node_value("DefaultServiceVersion", version);
        out["DefaultServiceVersion"] = version;
    }
    if (pugi::xml_node n = root.child("DeleteRetentionPolicy")) out["DeleteRetentionPolicy"] = delete_retention(n);
    if (pugi::xml_node n = root.child("StaticWebsite")) out["StaticWebsite"] = static_website(n);
    return out;
}

json merge_service_properties(json stored, const json& update) {
    for (auto& [key, value] : update.items()) stored[key] = value;
    return stored;
}

std::string blob_service_properties_xml(const json& p) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>";
    if (p.contains("Logging")) {
        const json& l = p["Logging"];
        xml += "<Logging>" + property_element("Version", l.value("Version", std::string("1.0"))) +
               property_element("Read", l.value("Read", false)) + property_element("Write", l.value("Write", false)) +
               property_element("Delete", l.value("Delete", false)) +
               retention_xml(l.value("RetentionPolicy", json::object())) + "</Logging>";
    }
    xml += metrics_and_cors_xml(p);
    if (p.contains("DefaultServiceVersion")) xml += property_element("DefaultServiceVersion", p["DefaultServiceVersion"].get<std::string>());
    if (p.contains("DeleteRetentionPolicy")) {
        const json& d = p["DeleteRetentionPolicy"];
        xml += "<DeleteRetentionPolicy>" + property_element("Enabled", d.value("Enabled", false));
        if (d.contains("Days")) xml += property_element("Days", std::to_string(d["Days"].get<long long>()));
        if (d.contains("AllowPermanentDelete")) xml += property_element("AllowPermanentDelete", d["AllowPermanentDelete"].get<bool>());
        xml += "</DeleteRetentionPolicy>";
    }
    if (p.contains("StaticWebsite")) {
        const json& s = p["StaticWebsite"];
        xml += "<StaticWebsite>" + property_element("Enabled", s.value("Enabled", false));
        for (const char* name : {"IndexDocument", "ErrorDocument404Path", "DefaultIndexDocumentPath"}) {
            if (s.contains(name)) xml += property_element(name, s[name].get<std::string>());
        }
        xml += "</StaticWebsite>";
    }
    return xml + "</StorageServiceProperties>";
}

json default_file_service_properties() {
    // A new account's File service: no metrics, no CORS rules, SMB Multichannel off.
    return {{"HourMetrics", {{"Version", "1.0"}, {"Enabled", false}, {"RetentionPolicy", {{"Enabled", false}}}}},
            {"MinuteMetrics", {{"Version", "1.0"}, {"Enabled", false}, {"RetentionPolicy", {{"Enabled", false}}}}},
            {"Cors", json::array()},
            {"ProtocolSettings", {{"SMB", {{"Multichannel", {{"Enabled", false}}}}}}}};
}

json parse_file_service_properties(std::string_view xml) {
    pugi::xml_document doc;
    pugi::xml_node root = properties_root(doc, xml);
    json out = json::object();
    read_metrics_and_cors(root, out);
    if (pugi::xml_node n = root.child("ShareDeleteRetentionPolicy")) {
        json policy{{"Enabled", boolean(required(n, "Enabled"))}};
        if (policy["Enabled"].get<bool>()) policy["Days"] = integer(required(n, "Days"), 1, 365);
        out["ShareDeleteRetentionPolicy"] = policy;
    }
    if (pugi::xml_node n = root.child("ProtocolSettings")) out["ProtocolSettings"] = protocol_settings(n);
    return out;
}

std::string file_service_properties_xml(const json& p, const FileServiceShape& shape) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>" + metrics_and_cors_xml(p);
    if (shape.share_delete_retention && p.contains("ShareDeleteRetentionPolicy")) {
        const json& d = p["ShareDeleteRetentionPolicy"];
        xml += "<ShareDeleteRetentionPolicy>" + property_element("Enabled", d.value("Enabled", false));
        if (d.contains("Days")) xml += property_element("Days", std::to_string(d["Days"].get<long long>()));
        xml += "</ShareDeleteRetentionPolicy>";
    }
    if (shape.protocol_settings && p.contains("ProtocolSettings")) {
        xml += "<ProtocolSettings>";
        const json& settings = p["ProtocolSettings"];
        if (settings.contains("SMB")) {
            const json& smb = settings["SMB"];
            xml += "<SMB>";
            if (smb.contains("Multichannel")) {
                xml += "<Multichannel>" + property_element("Enabled", smb["Multichannel"].value("Enabled", false)) + "</Multichannel>";
            }
            for (const char* name : {"Versions", "AuthenticationMethods", "KerberosTicketEncryption", "ChannelEncryption"}) {
                if (smb.contains(name)) xml += property_element(name, smb[name].get<std::string>());
            }
            xml += "</SMB>";
        }
        xml += "</ProtocolSettings>";
    }
    return xml + "</StorageServiceProperties>";
}

}  // namespace bai::storage
