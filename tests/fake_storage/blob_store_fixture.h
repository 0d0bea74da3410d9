// A BlobStore on a fresh database and content directory, with a container "data", and the
// helpers its tests share.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "common/crypto/base64.h"
#include "fake_storage/engine/blob_store.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/engine/storage_schema.h"
#include "tests/common/dev_account.h"
#include "tests/common/test_dir.h"

namespace bai::storage {

class BlobStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        db = db::Database::open(dir / "state.db");
        migrate_storage_schema(*db);
        files = std::make_unique<ContentFiles>(dir / "storage", false);
        store = std::make_unique<BlobStore>(*db, *files);
        store->create_container(bai::testing::kAcct, "data", {}, "");
    }

    std::unique_ptr<ContentWriter> bytes(const std::string& s) {
        auto w = files->begin(true);
        w->append(s);
        return w;
    }
    BlobInfo put(const std::string& name, const std::string& body, const Conditions& c = {}) {
        auto w = bytes(body);
        return store->put_blob(bai::testing::kAcct, "data", name, *w, {}, {}, c);
    }
    static std::string contents(const OpenBlob& b) {
        std::string out(b.info.size, '\0');
        EXPECT_EQ(b.read(out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }
    std::string read(const std::string& name) {
        return contents(store->open_blob(bai::testing::kAcct, "data", name));
    }
    void stage(const std::string& blob, const std::string& id, const std::string& body) {
        auto w = bytes(body);
        store->put_block(bai::testing::kAcct, "data", blob, crypto::base64_encode(id), *w);
    }
    int expect_error(const std::function<void()>& f, const std::string& code) {
        try {
            f();
        } catch (const StorageError& e) {
            EXPECT_EQ(e.code(), code) << e.what();
            return e.status();
        }
        ADD_FAILURE() << "no StorageError, expected " << code;
        return 0;
    }

    bai::testing::TestDir dir;  // (bai::storage::testing is error_code.h's, in a unity build)
    std::unique_ptr<db::Database> db;
    std::unique_ptr<ContentFiles> files;
    std::unique_ptr<BlobStore> store;
};

}  // namespace bai::storage
