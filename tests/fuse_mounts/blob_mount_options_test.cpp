#include "fuse_mounts/blob/blob_mount_options.h"

#include <gtest/gtest.h>

namespace bai::mounts {
namespace {

TEST(BlobMountOptions, TheServiceDefaultsSetTheKernelTimeouts) {
    BlobFsOptions o;
    apply_blob_mount_options(
        "--use-https=true -o big_writes -o max_read=131072 -o max_write=131072 -o attr_timeout=240 -o fsname=blobfuse "
        "-o kernel_cache -o entry_timeout=240 -o negative_timeout=120 -o allow_other",
        o);
    EXPECT_EQ(o.attr_timeout, 240);
    EXPECT_EQ(o.entry_timeout, 240);
    EXPECT_EQ(o.negative_timeout, 120);
    EXPECT_TRUE(o.kernel_cache);
    EXPECT_FALSE(o.read_only);
}

TEST(BlobMountOptions, ListsReadOnlyAndBlobfuseFlags) {
    BlobFsOptions o;
    apply_blob_mount_options("-oro,allow_other --file-cache-timeout-in-seconds=120 --tmp-path=/mnt/tmp", o);
    EXPECT_TRUE(o.read_only);
    EXPECT_EQ(o.attr_timeout, BlobFsOptions::kDefaultCacheSeconds);
    apply_blob_mount_options("", o);  // nothing: nothing changes
    EXPECT_TRUE(o.read_only);
    apply_blob_mount_options("-o attr_timeout=0,entry_timeout=0,negative_timeout=0", o);  // no kernel caches
    EXPECT_EQ(o.attr_timeout, 0);
    EXPECT_EQ(o.entry_timeout, 0);
    EXPECT_EQ(o.negative_timeout, 0);
}

TEST(BlobMountOptions, RefusesWhatBlobfuseWouldRefuseNamingIt) {
    BlobFsOptions o;
    auto message = [&](const std::string& text) {
        try {
            apply_blob_mount_options(text, o);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message("-o frobnicate").find("frobnicate"), std::string::npos);
    EXPECT_NE(message("--no-such-flag=1").find("--no-such-flag"), std::string::npos);
    EXPECT_NE(message("-o attr_timeout=soon").find("attr_timeout=soon"), std::string::npos);
    EXPECT_NE(message("-o attr_timeout=nan").find("attr_timeout=nan"), std::string::npos);
    EXPECT_NE(message("-o entry_timeout=-1").find("entry_timeout=-1"), std::string::npos);
    EXPECT_NE(message("-o").find("-o"), std::string::npos);
    EXPECT_NE(message("stray").find("stray"), std::string::npos);
}

}  // namespace
}  // namespace bai::mounts
