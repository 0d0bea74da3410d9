#include "emulator/batch/certificate_rules.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/crypto/owned.h"
#include "common/text/ascii.h"
#include "emulator/batch/batch_error.h"

namespace bai::batch {

using nlohmann::json;

namespace {

const std::string& need_text(const json& body, const char* name) {
    if (!body.contains(name) || body[name].is_null()) throw missing_property(name);
    if (!body[name].is_string() || body[name].get_ref<const std::string&>().empty()) {
        throw invalid_property(name, body[name].dump(), "The value must be a non-empty string");
    }
    return body[name].get_ref<const std::string&>();
}

// The certificate in `data`: a PKCS #12 archive opened with `password`, or a DER certificate.
crypto::Owned<X509, X509_free> read_certificate(const std::string& data, const std::string& format, const std::string& password) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
    if (format == "cer") return crypto::Owned<X509, X509_free>(d2i_X509(nullptr, &bytes, static_cast<long>(data.size())));
    crypto::Owned<PKCS12, PKCS12_free> archive(d2i_PKCS12(nullptr, &bytes, static_cast<long>(data.size())));
    if (!archive) return nullptr;
    EVP_PKEY* key = nullptr;
    X509* certificate = nullptr;
    STACK_OF(X509)* chain = nullptr;
    if (PKCS12_parse(archive.get(), password.c_str(), &key, &certificate, &chain) != 1) return nullptr;
    EVP_PKEY_free(key);
    sk_X509_pop_free(chain, X509_free);
    return crypto::Owned<X509, X509_free>(certificate);
}

}  // namespace

std::string certificate_key(const std::string& algorithm, const std::string& thumbprint) {
    return text::lower(algorithm) + "-" + text::lower(thumbprint);
}

json new_certificate_document(const json& body, const std::string& now) {
    if (!body.is_object()) throw BatchError(400, "InvalidRequestBody", "The specified Request Body is not syntactically valid.");
    const std::string thumbprint = text::lower(need_text(body, "thumbprint"));
    const std::string algorithm = text::lower(need_text(body, "thumbprintAlgorithm"));
    if (algorithm != "sha1") throw invalid_property("thumbprintAlgorithm", body["thumbprintAlgorithm"].dump(), "The value must be sha1");
    if (thumbprint.size() != 40 || thumbprint.find_first_not_of("0123456789abcdef") != std::string::npos) {
        throw invalid_property("thumbprint", body["thumbprint"].dump(), "A SHA-1 thumbprint is 40 hexadecimal digits");
    }
    std::string format = "pfx";
    if (body.contains("certificateFormat") && !body["certificateFormat"].is_null()) {
        format = text::lower(need_text(body, "certificateFormat"));
        if (format != "pfx" && format != "cer") {
            throw invalid_property("certificateFormat", body["certificateFormat"].dump(), "The value must be pfx or cer");
        }
    }
    std::string password;
    if (body.contains("password") && !body["password"].is_null()) {
        if (format == "cer") throw invalid_property("password", "******", "A cer certificate has no password");
        password = need_text(body, "password");
    }
    const std::optional<std::string> data = crypto::base64_decode(need_text(body, "data"));
    if (!data) throw invalid_property("data", "(not shown)", "The value must be base64");
    crypto::Owned<X509, X509_free> certificate = read_certificate(*data, format, password);
    if (!certificate) {
        throw invalid_property("data", "(not shown)",
                               format == "pfx" ? "The data is not a PKCS #12 archive that opens with the password given"
                                               : "The data is not a DER certificate");
    }
    if (crypto::certificate_thumbprint(certificate.get()) != thumbprint) {
        throw invalid_property("thumbprint", body["thumbprint"].dump(), "The thumbprint is not the certificate's SHA-1 thumbprint");
    }
    unsigned char* der = nullptr;
    const int der_size = i2d_X509(certificate.get(), &der);
    if (der_size <= 0) throw BatchError(500, "InternalServerError", "The certificate could not be encoded");
    const std::string public_data = crypto::base64_encode(std::string_view(reinterpret_cast<const char*>(der), static_cast<size_t>(der_size)));
    OPENSSL_free(der);
    return json{{"id", certificate_key(algorithm, thumbprint)},
                {"thumbprint", thumbprint},
                {"thumbprintAlgorithm", algorithm},
                {"state", "active"},
                {"stateTransitionTime", now},
                {"publicData", public_data},
                {"_format", format},
                {"_data", body["data"]},
                {"_password", password}};
}

}  // namespace bai::batch
