// The Batch API's certificates: add (a PFX with its password, or a CER), list, get, delete and
// cancel deletion. A certificate is addressed as certificates(thumbprintAlgorithm=A,thumbprint=T).
// Deleting one that a pool references leaves it deleteFailed (the service's way: cancel deletion
// makes it active again); one no pool uses is gone.
#include "common/text/ascii.h"
#include "common/time/timestamps.h"
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/body_properties.h"
#include "emulator/batch/batch_http.h"
#include "emulator/batch/certificate_rules.h"

namespace bai::batch {

using nlohmann::json;

namespace {

std::string certificate_path(const json& doc, bool capitalized) {
    return std::string("/certificates(") + (capitalized ? "ThumbprintAlgorithm=" : "thumbprintAlgorithm=") +
           doc.value("thumbprintAlgorithm", "") + (capitalized ? ",Thumbprint=" : ",thumbprint=") +
           doc.value("thumbprint", "") + ")";
}

// As the service shows a certificate: no ETag or Last-Modified, nothing of its secrets.
json certificate_view(const StoredEntity& entity, const std::string& base) {
    json out = json::object();
    for (const auto& [name, value] : entity.body.items()) {
        if (!name.empty() && name[0] != '_' && name != "id") out[name] = value;
    }
    out["url"] = base + certificate_path(entity.body, false);
    return out;
}

BatchError certificate_not_found() {
    return BatchError(404, "CertificateNotFound", "The specified certificate does not exist.");
}

// The pools of the account that reference the certificate.
std::vector<std::string> pools_using(const std::vector<StoredEntity>& pools, const json& certificate) {
    std::vector<std::string> out;
    for (const StoredEntity& pool : pools) {
        for (const json& reference : pool.body.value("certificateReferences", json::array())) {
            if (reference.is_object() && text::iequals(reference.value("thumbprint", ""), certificate.value("thumbprint", "")) &&
                text::iequals(reference.value("thumbprintAlgorithm", ""), certificate.value("thumbprintAlgorithm", ""))) {
                out.push_back(pool.body.value("id", ""));
                break;
            }
        }
    }
    return out;
}

}  // namespace

void BatchApi::serve_certificates(http::Routes& server) {
    const std::string one = R"(/certificates\(thumbprintAlgorithm=([^,)]+),thumbprint=([^)]+)\))";
    route(server, "POST", "/certificates", [this](auto& a, auto& q, auto& r) { add_certificate(a, q, r); });
    route(server, "GET", "/certificates", [this](auto& a, auto& q, auto& r) {
        send_list(a, q, r, kCertificates, "/certificates", "certificates",
                  [this, &q](const StoredEntity& e, const std::string&) { return certificate_view(e, base_url(q)); });
    });
    route(server, "GET", one, [this](auto& a, auto& q, auto& r) { get_certificate(a, q, r); });
    route(server, "DELETE", one, [this](auto& a, auto& q, auto& r) { delete_certificate(a, q, r); });
    route(server, "POST", one + "/canceldelete", [this](auto& a, auto& q, auto& r) { cancel_certificate_deletion(a, q, r); });
}

StoredEntity BatchApi::need_certificate(const BatchAccount& account, const httplib::Request& req) const {
    std::optional<StoredEntity> found = store_.get(account.name, kCertificates, certificate_key(req.matches[1], req.matches[2]));
    if (!found) throw certificate_not_found();
    return *found;
}

void BatchApi::add_certificate(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req);
    json doc = new_certificate_document(body, time::format_iso8601(time::now()));
    refuse_unknown_properties(body, "CertificateAddParameter");
    if (!store_.add(account.name, kCertificates, doc)) {
        throw BatchError(409, "CertificateExists", "The specified certificate already exists.");
    }
    const std::string url = base_url(req) + certificate_path(doc, true);
    res.set_header("Location", url);
    res.set_header("DataServiceId", url);
    res.status = 201;
}

void BatchApi::get_certificate(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    json out = certificate_view(need_certificate(account, req), base_url(req));
    out["odata.metadata"] = base_url(req) + "/$metadata#certificates/@Element";
    res.set_content(out.dump(), "application/json;odata=minimalmetadata");
}

void BatchApi::delete_certificate(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity certificate = need_certificate(account, req);
    std::optional<std::string> next;
    const std::vector<std::string> users =
        pools_using(store_.list(account.name, kPools, "", 1000000, next), certificate.body);
    if (users.empty()) {
        store_.remove(account.name, kCertificates, certificate.body.value("id", ""));
    } else {
        const std::string now = time::format_iso8601(time::now());
        json values = json::array();
        for (const std::string& pool : users) values.push_back({{"name", "Pool"}, {"value", pool}});
        store_.update(account.name, kCertificates, certificate.body.value("id", ""), [&](json& doc) {
            doc["previousState"] = doc.value("state", "active");
            doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
            doc["state"] = "deletefailed";
            doc["stateTransitionTime"] = now;
            doc["deleteCertificateError"] = {{"code", "CertificateBeingUsed"},
                                             {"message", "The certificate is used by one or more pools."},
                                             {"values", values}};
            return true;
        });
    }
    res.status = 202;
}

void BatchApi::cancel_certificate_deletion(const BatchAccount& account, const httplib::Request& req, httplib::Response& res) {
    StoredEntity certificate = need_certificate(account, req);
    if (certificate.body.value("state", "") != "deletefailed") {
        throw BatchError(409, "CertificateStateActive", "The specified certificate is in active state.");
    }
    const std::string now = time::format_iso8601(time::now());
    store_.update(account.name, kCertificates, certificate.body.value("id", ""), [&](json& doc) {
        doc["previousState"] = "deletefailed";
        doc["previousStateTransitionTime"] = doc.value("stateTransitionTime", now);
        doc["state"] = "active";
        doc["stateTransitionTime"] = now;
        doc.erase("deleteCertificateError");
        return true;
    });
    res.status = 204;
}

}  // namespace bai::batch
