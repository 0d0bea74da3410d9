#include "fake_storage/engine/conditions.h"

#include <chrono>

#include "fake_storage/engine/storage_error.h"

namespace bai::storage {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string_view unquote(std::string_view tag) {
    tag = trim(tag);
    if (tag.starts_with("W/")) tag.remove_prefix(2);
    if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') tag = tag.substr(1, tag.size() - 2);
    return tag;
}

// True when `header` ("*" or a comma-separated list of etags) names `etag`.
bool matches(const std::string& header, const std::string& etag) {
    std::string_view rest = header;
    std::string_view wanted = unquote(etag);
    while (!rest.empty()) {
        size_t comma = rest.find(',');
        std::string_view item = trim(rest.substr(0, comma));
        if (item == "*" || unquote(item) == wanted) return true;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return false;
}

// HTTP dates have whole seconds.
time::TimePoint whole_seconds(time::TimePoint t) { return std::chrono::floor<std::chrono::seconds>(t); }

[[noreturn]] void not_met(int status) {
    fail(status, "ConditionNotMet", "The condition specified using HTTP conditional header(s) is not met.");
}

void check_tags(const Conditions& c, const Version& current) {
    static const Tags kNone;
    check_tag_condition(c, current.tags != nullptr ? *current.tags : kNone);
}

}  // namespace

void check_tag_condition(const Conditions& c, const Tags& tags) {
    if (c.if_tags && !c.if_tags->matches(tags)) not_met(412);
}

void check_read_conditions(const Conditions& c, const Version& current) {
    check_tags(c, current);
    // "If it does not exist" on a read of something that does: the service refuses the request.
    if (c.if_none_match && trim(*c.if_none_match) == "*") {
        fail(400, "UnsatisfiableCondition", "The request includes an unsatisfiable condition for this operation.");
    }
    if (c.if_match && !matches(*c.if_match, current.etag)) not_met(412);
    if (c.if_unmodified_since && whole_seconds(current.last_modified) > *c.if_unmodified_since) {
        not_met(412);
    }
    if (c.if_none_match && matches(*c.if_none_match, current.etag)) not_met(304);
    if (c.if_modified_since && whole_seconds(current.last_modified) <= *c.if_modified_since) {
        not_met(304);
    }
}

void check_write_conditions(const Conditions& c, const std::optional<Version>& current,
                            const std::string& exists_code, const std::string& exists_message) {
    if (!current) {
        if (c.if_match || c.if_unmodified_since || c.if_tags) not_met(412);
        return;
    }
    check_tags(c, *current);
    if (c.create_new_only) {
        fail(403, "UnauthorizedBlobOverwrite", "This request is not authorized to perform blob overwrites.");
    }
    // If-None-Match: * refuses to replace what exists (Put Blob, Put Block List: 409); the other
    // writes of an existing resource ignore it, as the service does.
    if (c.if_none_match && trim(*c.if_none_match) == "*") {
        if (!exists_code.empty()) fail(409, exists_code, exists_message);
    } else if (c.if_none_match && matches(*c.if_none_match, current->etag)) {
        not_met(412);
    }
    if (c.if_match && !matches(*c.if_match, current->etag)) not_met(412);
    if (c.if_modified_since && whole_seconds(current->last_modified) <= *c.if_modified_since) {
        not_met(412);
    }
    if (c.if_unmodified_since && whole_seconds(current->last_modified) > *c.if_unmodified_since) {
        not_met(412);
    }
}

void check_source_conditions(const Conditions& c, const Version& source, SourceRead read) {
    // A source's tags that do not match: 412 ConditionNotMet (recorded for Copy Blob).
    static const Tags kNone;
    if (c.if_tags && !c.if_tags->matches(source.tags != nullptr ? *source.tags : kNone)) not_met(412);
    // The From URL writes read the source as a client reads a blob: what a read answers is
    // relayed as CannotVerifyCopySource (recorded: 304 for x-ms-source-if-none-match and
    // -if-modified-since); a copy names the source's conditions.
    auto unmet = [read](int read_status) {
        if (read == SourceRead::ranged) {
            fail(read_status, "CannotVerifyCopySource",
                 "The condition specified using HTTP conditional header(s) is not met.");
        }
        fail(412, "SourceConditionNotMet", "The source condition specified using HTTP conditional header(s) is not met.");
    };
    if (c.if_match && !matches(*c.if_match, source.etag)) unmet(412);
    if (c.if_unmodified_since && whole_seconds(source.last_modified) > *c.if_unmodified_since) unmet(412);
    if (c.if_none_match && matches(*c.if_none_match, source.etag)) unmet(304);
    if (c.if_modified_since && whole_seconds(source.last_modified) <= *c.if_modified_since) unmet(304);
}

}  // namespace bai::storage
