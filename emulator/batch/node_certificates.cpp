#include "emulator/batch/node_certificates.h"

#include <fstream>

#include "common/crypto/base64.h"
#include "common/text/ascii.h"
#include "emulator/batch/certificate_rules.h"

namespace bai::batch {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool visible_to(const json& reference, const std::string& kind) {
    const json visibility = reference.value("visibility", json());
    if (!visibility.is_array() || visibility.empty()) return true;
    for (const json& v : visibility) {
        if (v.is_string() && text::iequals(v.get<std::string>(), kind)) return true;
    }
    return false;
}

// Written owner-only: a private key is in there.
void write_private(const fs::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << bytes;
    out.close();
    std::error_code ec;
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, ec);
}

}  // namespace

void install_certificates(const EntityStore& store, const std::string& account, const json& pool, const fs::path& dir,
                          const std::string& kind) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::permissions(dir, fs::perms::owner_all, ec);
    const json references = pool.value("certificateReferences", json::array());
    if (!references.is_array()) return;
    for (const json& reference : references) {
        if (!reference.is_object() || !visible_to(reference, kind)) continue;
        const std::string algorithm = text::lower(reference.value("thumbprintAlgorithm", "sha1"));
        const std::string thumbprint = text::lower(reference.value("thumbprint", ""));
        std::optional<StoredEntity> certificate = store.get(account, kCertificates, certificate_key(algorithm, thumbprint));
        if (!certificate || certificate->body.value("state", "") == "deleting") continue;
        const std::string format = text::lower(certificate->body.value("_format", "pfx"));
        std::optional<std::string> data = crypto::base64_decode(certificate->body.value("_data", ""));
        if (!data) continue;
        // Named from the stored certificate (whose thumbprint was checked as hex when added), not
        // from the reference.
        const fs::path file = dir / (certificate->body.value("id", "") + "." + (format == "cer" ? "cer" : "pfx"));
        if (fs::exists(file, ec)) continue;
        write_private(file, *data);
        if (format == "pfx") write_private(fs::path(file.string() + ".pw"), certificate->body.value("_password", ""));
    }
}

}  // namespace bai::batch
