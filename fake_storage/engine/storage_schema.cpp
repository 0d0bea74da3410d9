#include "fake_storage/engine/storage_schema.h"

#include <array>

namespace bai::storage {

void migrate_storage_schema(db::Database& db) {
    // Times are 100 ns ticks since the Unix epoch; content and metadata are JSON.
    static constexpr std::array migrations = {
        db::Migration{1, R"sql(
CREATE TABLE containers (
  account TEXT NOT NULL, name TEXT NOT NULL,
  etag TEXT NOT NULL, created INTEGER NOT NULL, last_modified INTEGER NOT NULL,
  metadata TEXT NOT NULL DEFAULT '', public_access TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (account, name)) WITHOUT ROWID;
CREATE TABLE blobs (
  id INTEGER PRIMARY KEY,
  account TEXT NOT NULL, container TEXT NOT NULL, name TEXT NOT NULL,
  content_id TEXT NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL,
  created INTEGER NOT NULL, last_modified INTEGER NOT NULL,
  content TEXT NOT NULL DEFAULT '', metadata TEXT NOT NULL DEFAULT '',
  UNIQUE (account, container, name));
CREATE TABLE committed_blocks (
  blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, block_id TEXT NOT NULL, offset INTEGER NOT NULL, size INTEGER NOT NULL,
  PRIMARY KEY (blob_id, seq)) WITHOUT ROWID;
CREATE TABLE uncommitted_blocks (
  account TEXT NOT NULL, container TEXT NOT NULL, blob TEXT NOT NULL, block_id TEXT NOT NULL,
  content_id TEXT NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL,
  PRIMARY KEY (account, container, blob, block_id)) WITHOUT ROWID;
)sql"},
        db::Migration{2, R"sql(
CREATE TABLE shares (
  account TEXT NOT NULL, name TEXT NOT NULL,
  etag TEXT NOT NULL, created INTEGER NOT NULL, last_modified INTEGER NOT NULL,
  metadata TEXT NOT NULL DEFAULT '', quota INTEGER NOT NULL,
  PRIMARY KEY (account, name)) WITHOUT ROWID;
-- Directories and files of a share; path is relative to the share root, case preserved, unique
-- without regard to case as in Azure Files. The share root itself has no row.
CREATE TABLE share_entries (
  id INTEGER PRIMARY KEY,
  account TEXT NOT NULL, share TEXT NOT NULL, path TEXT NOT NULL COLLATE NOCASE,
  parent TEXT NOT NULL COLLATE NOCASE, name TEXT NOT NULL,
  is_dir INTEGER NOT NULL, size INTEGER NOT NULL DEFAULT 0, etag TEXT NOT NULL,
  last_modified INTEGER NOT NULL, creation_time INTEGER NOT NULL,
  last_write_time INTEGER NOT NULL, change_time INTEGER NOT NULL,
  attributes TEXT NOT NULL, content TEXT NOT NULL DEFAULT '', metadata TEXT NOT NULL DEFAULT '',
  UNIQUE (account, share, path));
CREATE INDEX share_entries_by_parent ON share_entries(account, share, parent, name COLLATE NOCASE);
-- Put Range bodies received but not yet applied to their file (replayed at start).
CREATE TABLE pending_ranges (
  id INTEGER PRIMARY KEY, account TEXT NOT NULL, share TEXT NOT NULL, path TEXT NOT NULL,
  offset INTEGER NOT NULL, content_id TEXT NOT NULL);
)sql"},
        // Small bodies live in the database (see kInlineLimit); content_id is '' for them.
        db::Migration{3, R"sql(
ALTER TABLE blobs ADD COLUMN inline_body BLOB;
ALTER TABLE pending_ranges ADD COLUMN data BLOB;
)sql"},
        // A blob committed from large staged blocks keeps them as its parts: composed = 1, and
        // each committed block names its block file (content_id; '' when its bytes are a run of
        // the blob's own content at offset).
        db::Migration{4, R"sql(
ALTER TABLE blobs ADD COLUMN composed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE committed_blocks ADD COLUMN content_id TEXT NOT NULL DEFAULT '';
)sql"},
        // Service properties (logging, metrics, CORS, ...) per account and service, as JSON.
        db::Migration{5, R"sql(
CREATE TABLE service_settings (
  account TEXT NOT NULL, service TEXT NOT NULL, properties TEXT NOT NULL,
  PRIMARY KEY (account, service)) WITHOUT ROWID;
)sql"},
        // Leases on containers and blobs (lease.h's JSON; '' for none).
        db::Migration{6, R"sql(
ALTER TABLE containers ADD COLUMN lease TEXT NOT NULL DEFAULT '';
ALTER TABLE blobs ADD COLUMN lease TEXT NOT NULL DEFAULT '';
)sql"},
        // Blob types, snapshots and what blobs carry besides content: the blobs table is rebuilt
        // (a blob is now unique by name and snapshot, '' for the base blob), and so is
        // committed_blocks, which refers to it. Append blobs: block_count Append Blocks, sealed;
        // page blobs: sequence_number. tier: '' while inferred (Hot). tags: JSON; copy_state:
        // the x-ms-copy-* properties of a copy's destination (JSON).
        db::Migration{7, R"sql(
CREATE TABLE blobs_v7 (
  id INTEGER PRIMARY KEY,
  account TEXT NOT NULL, container TEXT NOT NULL, name TEXT NOT NULL,
  snapshot TEXT NOT NULL DEFAULT '',
  content_id TEXT NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL,
  created INTEGER NOT NULL, last_modified INTEGER NOT NULL,
  content TEXT NOT NULL DEFAULT '', metadata TEXT NOT NULL DEFAULT '',
  inline_body BLOB, composed INTEGER NOT NULL DEFAULT 0, lease TEXT NOT NULL DEFAULT '',
  blob_type TEXT NOT NULL DEFAULT 'BlockBlob', block_count INTEGER NOT NULL DEFAULT 0,
  sealed INTEGER NOT NULL DEFAULT 0, sequence_number INTEGER NOT NULL DEFAULT 0,
  tier TEXT NOT NULL DEFAULT '', tier_changed INTEGER NOT NULL DEFAULT 0,
  archive_status TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '',
  copy_state TEXT NOT NULL DEFAULT '',
  UNIQUE (account, container, name, snapshot));
INSERT INTO blobs_v7(id, account, container, name, content_id, size, etag, created, last_modified,
                     content, metadata, inline_body, composed, lease)
  SELECT id, account, container, name, content_id, size, etag, created, last_modified, content,
         metadata, inline_body, composed, lease FROM blobs;
CREATE TABLE committed_blocks_v7 (
  blob_id INTEGER NOT NULL REFERENCES blobs_v7(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, block_id TEXT NOT NULL, offset INTEGER NOT NULL, size INTEGER NOT NULL,
  content_id TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (blob_id, seq)) WITHOUT ROWID;
INSERT INTO committed_blocks_v7 SELECT blob_id, seq, block_id, offset, size, content_id FROM committed_blocks;
DROP TABLE committed_blocks;
DROP TABLE blobs;
ALTER TABLE blobs_v7 RENAME TO blobs;
ALTER TABLE committed_blocks_v7 RENAME TO committed_blocks;
CREATE INDEX blobs_tagged ON blobs(account) WHERE tags <> '';
)sql"},
        // A page blob's written pages: non-overlapping runs [start, end) whose bytes are a run
        // of a block file (content_id from content_offset) or, for small writes, inline (data).
        db::Migration{8, R"sql(
CREATE TABLE page_ranges (
  blob_id INTEGER NOT NULL REFERENCES blobs(id) ON DELETE CASCADE,
  start INTEGER NOT NULL, end INTEGER NOT NULL,
  content_id TEXT NOT NULL DEFAULT '', content_offset INTEGER NOT NULL DEFAULT 0, data BLOB,
  PRIMARY KEY (blob_id, start)) WITHOUT ROWID;
CREATE INDEX page_ranges_by_content ON page_ranges(content_id) WHERE content_id <> '';
)sql"},
        // A container's stored access policies (Set Container ACL), as JSON ('' for none).
        db::Migration{9, R"sql(
ALTER TABLE containers ADD COLUMN signed_identifiers TEXT NOT NULL DEFAULT '';
)sql"},
        // Leases on shares (lease.h's JSON; '' for none).
        db::Migration{10, R"sql(
ALTER TABLE shares ADD COLUMN lease TEXT NOT NULL DEFAULT '';
)sql"},
        // Leases on files (Lease File; lease.h's JSON, '' for none). A snapshot's copy of an
        // entry leaves it out: a snapshot's files have no leases.
        db::Migration{11, R"sql(
ALTER TABLE share_entries ADD COLUMN lease TEXT NOT NULL DEFAULT '';
)sql"},
        // Blob versions: a base blob's current version id ('' when written with versioning off);
        // a previous version is a row of its own whose snapshot is '@' and its version id.
        db::Migration{12, R"sql(
ALTER TABLE blobs ADD COLUMN version_id TEXT NOT NULL DEFAULT '';
)sql"},
        // The Copy File that made a file (file_copy_to_json: id, source, bytes, completion time;
        // '' for a file never copied).
        db::Migration{13, R"sql(
ALTER TABLE share_entries ADD COLUMN copy TEXT NOT NULL DEFAULT '';
)sql"},
        // A share's stored access policies (Set Share ACL, as a container's: JSON, '' for none),
        // its access tier ('' for the default, TransactionOptimized) and when that was last set
        // (0: when the share was made).
        db::Migration{14, R"sql(
ALTER TABLE shares ADD COLUMN signed_identifiers TEXT NOT NULL DEFAULT '';
ALTER TABLE shares ADD COLUMN access_tier TEXT NOT NULL DEFAULT '';
ALTER TABLE shares ADD COLUMN access_tier_changed INTEGER NOT NULL DEFAULT 0;
)sql"},
        // A file's written ranges and when each part last changed (file_ranges.h's text; '' when
        // unknown: written through a mount, whose bytes on disk then say), its permission key
        // ('' for the share's default permission), and each share's permissions (Create
        // Permission: SDDL by key).
        db::Migration{15, R"sql(
ALTER TABLE share_entries ADD COLUMN ranges TEXT NOT NULL DEFAULT '';
ALTER TABLE share_entries ADD COLUMN permission_key TEXT NOT NULL DEFAULT '';
CREATE TABLE share_permissions (
  account TEXT NOT NULL, share TEXT NOT NULL, key TEXT NOT NULL, permission TEXT NOT NULL,
  PRIMARY KEY (account, share, key)) WITHOUT ROWID;
)sql"},
    };
    db.migrate("storage", migrations);
}

}  // namespace bai::storage
