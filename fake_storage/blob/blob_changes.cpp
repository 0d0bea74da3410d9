// The container's change feed (fake_storage/http/change_feed.h).
#include "fake_storage/blob/blob_service.h"
#include "fake_storage/http/change_feed.h"

namespace bai::storage {

void BlobService::list_changes(StorageCall& call) {
    store_.get_container(call.account.name, call.request.container);  // 404 ContainerNotFound
    answer_changes(call.request, journal_, call.account.name, call.request.container, call.response);
}

}  // namespace bai::storage
