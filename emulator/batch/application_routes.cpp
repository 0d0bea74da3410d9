// The Batch API's applications: the packages the account knows (--batch-application), listed
// and got as the service summarizes them.
#include "emulator/batch/batch_api.h"
#include "emulator/batch/batch_error.h"
#include "emulator/batch/batch_http.h"

namespace bai::batch {

using nlohmann::json;

void BatchApi::serve_applications(http::Routes& server) {
    route(server, "GET", "/applications", [this](auto& a, auto& q, auto& r) {
        send_computed_list(q, r, packages_.summaries(a.name), base_url(q) + "/$metadata#listapplicationsummariesresponses");
    });
    route(server, "GET", R"(/applications/([^/]+))", [this](auto& a, auto& q, auto& r) {
        std::optional<json> summary = packages_.summary(a.name, q.matches[1]);
        if (!summary) throw BatchError(404, "ApplicationNotFound", "The specified application does not exist.");
        (*summary)["odata.metadata"] = base_url(q) + "/$metadata#getapplicationsummaryresponse/@Element";
        r.set_content(summary->dump(), "application/json;odata=minimalmetadata");
    });
}

}  // namespace bai::batch
