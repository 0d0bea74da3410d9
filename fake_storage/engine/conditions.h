// Conditional headers (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/time/timestamps.h"
#include "fake_storage/engine/blob_tags.h"

namespace bai::storage {

struct Conditions {
    std::optional<std::string> if_match;
    std::optional<std::string> if_none_match;
    std::optional<time::TimePoint> if_modified_since;
    std::optional<time::TimePoint> if_unmodified_since;
    // The caller may create the resource but not replace it (a SAS that grants the write through
    // its 'c' letter alone): an existing one is refused, 403 UnauthorizedBlobOverwrite.
    bool create_new_only = false;
    // x-ms-lease-id: a leased resource is changed only by its lease's holder (lease.h).
    std::optional<std::string> lease_id;
    // x-ms-if-tags: the blob's tags must satisfy it (412 ConditionNotMet otherwise).
    std::shared_ptr<const TagExpression> if_tags;

    // No conditional header (the lease id is not one).
    bool empty() const {
        return !if_match && !if_none_match && !if_modified_since && !if_unmodified_since;
    }
};

struct Version {
    std::string etag;
    time::TimePoint last_modified;
    const Tags* tags = nullptr;  // a blob's, checked against if_tags (none: no tags)
};

// x-ms-if-tags alone, against a blob's tags (operations that take no other condition: Get Blob
// Tags, Get Block List): 412 ConditionNotMet when they do not satisfy it.
void check_tag_condition(const Conditions& conditions, const Tags& tags);

// For reads of an existing resource: throws StorageError 400 UnsatisfiableCondition for
// If-None-Match: *, 304 (ConditionNotMet) when
// If-None-Match or If-Modified-Since fail, 412 ConditionNotMet when If-Match or
// If-Unmodified-Since fail.
void check_read_conditions(const Conditions& conditions, const Version& current);

// For writes. `current` is nullopt when the resource does not exist yet. If-None-Match: * on an
// existing resource throws 409 `exists_code` (and is ignored where that is empty); any other failed condition 412 ConditionNotMet;
// create_new_only on an existing resource 403 UnauthorizedBlobOverwrite.
void check_write_conditions(const Conditions& conditions, const std::optional<Version>& current,
                            const std::string& exists_code, const std::string& exists_message);

// The conditions on a copy's source (x-ms-source-if-match, -none-match, -modified-since,
// -unmodified-since, -tags), against the source read: tags 412 ConditionNotMet; the others 412
// SourceConditionNotMet for a copy, and for a ranged read CannotVerifyCopySource with the status a
// read of the source answers (304 or 412).
// How the source is read: by a copy (Copy Blob, Copy Blob From URL, Put Blob From URL), or as a
// range by Put Block, Append Block and Put Page From URL.
enum class SourceRead { copy, ranged };
void check_source_conditions(const Conditions& conditions, const Version& source, SourceRead read = SourceRead::copy);

}  // namespace bai::storage
