#include "fake_storage/file/rename_source.h"

#include "common/time/timestamps.h"
#include "fake_storage/auth/sas.h"
#include "fake_storage/blob/copy_source.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"

namespace bai::storage {

std::string authorize_rename_source(const StorageCall& call, AccountRegistry& accounts, bool directory) {
    const StorageRequest& r = call.request;
    const char* header = "x-ms-file-rename-source";
    if (!r.has_header(header)) missing_header(header);
    const std::string url = r.header(header);
    CopySource source;
    try {
        source = parse_copy_source(url, r.header("Host"), header, ".file.core.windows.net");
    } catch (const StorageError& e) {
        if (e.code() == "CannotVerifyCopySource") invalid_header(header, url);  // another server's URL
        throw;
    }
    if (source.account != call.account.name || source.container != r.container) invalid_header(header, url);
    // The source URL read as a request of its own: its query carries the source's SAS, if any.
    httplib::Request http;
    http.method = "PUT";
    http.target = "/" + source.account + "/" + source.container + "/x" + (source.query.empty() ? "" : "?" + source.query);
    http.remote_addr = r.http->remote_addr;
    StorageRequest source_request = parse_path_style_request(http);
    source_request.container = source.container;
    source_request.name = source.name;
    // A share snapshot is read-only: nothing is renamed out of one.
    if (!source_request.param("sharesnapshot").value_or("").empty()) {
        fail(400, "ShareSnapshotOperationNotSupported", "The operation is not supported on a share snapshot.");
    }
    if (call.authorization != Authorization::sas) return source.name;
    std::optional<Account> owner = accounts.find(source.account);
    if (!owner || !has_sas(source_request)) {
        fail(403, "AuthorizationPermissionMismatch",
             "This request is not authorized to perform this operation using this permission.");
    }
    SasRule remove{ResourceLevel::object, "d", "d",
                   directory ? ServiceSasScope::container : ServiceSasScope::container_or_object, false};
    verify_sas(source_request, *owner, {SasService::file, source.container, source.name, remove}, time::now());
    return source.name;
}

}  // namespace bai::storage
