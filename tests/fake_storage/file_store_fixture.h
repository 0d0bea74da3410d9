// A FileStore on a fresh database and content directory, with one share, for its tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "fake_storage/engine/file_store.h"
#include "fake_storage/engine/storage_schema.h"
#include "tests/common/dev_account.h"
#include "tests/common/test_dir.h"

namespace bai::storage {

class FileStoreTest : public ::testing::Test {
protected:
    explicit FileStoreTest(std::string share) : share_name(std::move(share)) {}

    void SetUp() override {
        db = db::Database::open(dir / "state.db");
        migrate_storage_schema(*db);
        files = std::make_unique<ContentFiles>(dir / "storage", false);
        store = std::make_unique<FileStore>(*db, *files);
        store->create_share(bai::testing::kAcct, share_name, std::nullopt, {});
        root = store->share_root(bai::testing::kAcct, share_name);
    }

    std::string share_name;
    bai::testing::TestDir dir;
    std::unique_ptr<db::Database> db;
    std::unique_ptr<ContentFiles> files;
    std::unique_ptr<FileStore> store;
    std::filesystem::path root;  // the share's directory
};

}  // namespace bai::storage
