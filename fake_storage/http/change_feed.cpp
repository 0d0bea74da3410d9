#include "fake_storage/http/change_feed.h"

#include <nlohmann/json.hpp>

#include "fake_storage/http/storage_headers.h"

namespace bai::storage {

namespace {

std::optional<std::uint64_t> number_param(const StorageRequest& r, const char* name, std::uint64_t most) {
    std::optional<std::string> text = r.param(name);
    if (!text) return std::nullopt;
    if (text->empty() || text->size() > 20 || text->find_first_not_of("0123456789") != std::string::npos) {
        invalid_query(name, *text);
    }
    const std::uint64_t value = std::stoull(*text);
    if (value > most) invalid_query(name, *text);
    return value;
}

}  // namespace

void answer_changes(const StorageRequest& r, ChangeJournal& journal, const std::string& account,
                    const std::string& volume, httplib::Response& response) {
    const std::optional<std::uint64_t> since = number_param(r, "since", UINT64_MAX);
    const std::string epoch = r.param("epoch").value_or("");
    if (since && epoch.empty()) invalid_query("epoch", "");
    const std::uint64_t wait = number_param(r, "timeout", kMaxChangesWait).value_or(0);
    ChangeJournal::Read read = journal.read(account, volume, epoch, since, std::chrono::seconds(wait));
    nlohmann::json body = {{"epoch", read.epoch}, {"next", read.next}, {"everything", read.everything},
                           {"paths", read.paths}};
    response.set_content(body.dump(), "application/json");
}

}  // namespace bai::storage
