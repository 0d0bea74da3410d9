// The change feed of a container or a share, an extension of the emulator's for its filesystems on
// other hosts (bai-blobfuse, bai-sharefuse): GET /ACCOUNT/CONTAINER?restype=container&comp=x-bai-changes
// (a share: restype=share) [&since=N&epoch=E][&timeout=S]: what changed in it after change N of the
// emulator's run E (ChangeJournal), waiting up to S seconds (at most kMaxChangesWait) for a change
// when none did. Authorized as the volume's listing (List Blobs, List Directories and Files).
// Answers JSON: {"epoch": E, "next": N, "everything": false, "paths": ["a/b", ...]} ("" names the
// whole volume).
#pragma once

#include <httplib.h>

#include <string>

#include "fake_storage/engine/change_journal.h"
#include "fake_storage/http/storage_request.h"

namespace bai::storage {

inline constexpr const char* kChangesComp = "x-bai-changes";
inline constexpr int kMaxChangesWait = 30;

// Answers the feed's request `r` for `volume` of `account` from `journal` (400 naming the query
// parameter that is wrong).
void answer_changes(const StorageRequest& r, ChangeJournal& journal, const std::string& account,
                    const std::string& volume, httplib::Response& response);

}  // namespace bai::storage
