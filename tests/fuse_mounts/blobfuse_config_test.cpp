// bai-blobfuse's configuration file and command line, as blobfuse's.
#include "fuse_mounts/remote/blobfuse_config.h"
#include "fuse_mounts/blob/blob_rest_answers.h"
#include "fuse_mounts/share/share_rest_answers.h"
#include "fuse_mounts/share/share_rest_container.h"

#include <gtest/gtest.h>

namespace bai::mounts {
namespace {

std::string error_of(const std::string& text) {
    BlobRestSettings s;
    try {
        parse_blobfuse_config(text, s);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(BlobfuseConfig, ReadsBlobfusesKeysAndNamesTheLineOfABadOne) {
    BlobRestSettings s;
    parse_blobfuse_config("# a comment\naccountName devstoreaccount1\r\naccountKey  a2V5\n\n  containerName data\n"
                          "blobEndpoint http://127.0.0.1:10000/devstoreaccount1\nauthType Key\n",
                          s);
    EXPECT_EQ(s.account, "devstoreaccount1");
    EXPECT_EQ(s.key, "a2V5");
    EXPECT_EQ(s.container, "data");
    EXPECT_EQ(s.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
    EXPECT_EQ(error_of("accountName a\nbogus 1\n"), "config line 2: bogus: unknown key");
    EXPECT_EQ(error_of("accountKey\n"), "config line 1: accountKey has no value");
    EXPECT_NE(error_of("authType MSI\n").find("only Key and SAS"), std::string::npos);
}

TEST(BlobfuseConfig, TheSettingsAreCheckedWhenTheContainerIsMade) {
    BlobRestSettings s;
    s.endpoint = "http://127.0.0.1:1/devstoreaccount1";
    s.account = "devstoreaccount1";
    s.container = "data";
    s.follow_changes = false;
    EXPECT_THROW(BlobRestContainer{s}, std::invalid_argument);  // neither key nor SAS
    s.key = "not base64!";
    EXPECT_THROW(BlobRestContainer{s}, std::invalid_argument);
    s.key = "a2V5";
    s.endpoint = "ftp://x";
    EXPECT_THROW(BlobRestContainer{s}, std::invalid_argument);
    s.endpoint = "http://127.0.0.1:1/devstoreaccount1";
    BlobRestContainer made(s);
    EXPECT_EQ(made.container(), "data");
    // Nothing listens there: a storage error, not a crash.
    try {
        made.properties("x");
        FAIL() << "no error";
    } catch (const storage::StorageError& e) {
        EXPECT_EQ(e.status(), 503);
    }
}

TEST(BlobfuseCommand, TakesBlobfusesCommandLine) {
    BlobfuseCommand c = parse_blobfuse_command({"/mnt/data", "--tmp-path=/tmp/bf", "--config-file=/etc/bf.cfg", "-o",
                                                "attr_timeout=240", "-o", "ro", "--use-https=false"});
    EXPECT_EQ(c.mountpoint, "/mnt/data");
    EXPECT_EQ(c.config_file, "/etc/bf.cfg");
    EXPECT_EQ(c.tmp_path, "/tmp/bf");
    BlobFsOptions options;
    apply_blob_mount_options(c.mount_options, options);
    EXPECT_TRUE(options.read_only);
    EXPECT_EQ(options.attr_timeout, 240);
    EXPECT_THROW(parse_blobfuse_command({"--config-file=/x"}), std::invalid_argument);  // no mount point
    EXPECT_THROW(parse_blobfuse_command({"/mnt"}), std::invalid_argument);              // no config
    EXPECT_THROW(parse_blobfuse_command({"/mnt", "--config-file=/x", "-o", "frobnicate"}), std::invalid_argument);
    EXPECT_THROW(parse_blobfuse_command({"/mnt", "/other", "--config-file=/x"}), std::invalid_argument);
    EXPECT_THROW(parse_blobfuse_command({"/mnt", "--config-file="}), std::invalid_argument);
}

TEST(BlobRestAnswers, AnErrorsMessageIsItsFirstLineWithWordsElseItsCode) {
    httplib::Response r;
    r.status = 404;
    r.body = "<?xml version=\"1.0\"?><Error><Code>BlobNotFound</Code><Message>The specified blob does not exist.\n"
             "RequestId:1\nTime:2026</Message></Error>";
    EXPECT_EQ(error_message(r), "The specified blob does not exist.");
    r.body = "<Error><Message>\r\n  \nSecond line.\r\nRequestId:1</Message></Error>";  // found by the fuzzer
    EXPECT_EQ(error_message(r), "Second line.");
    r.body = "";  // a HEAD's
    r.headers.emplace("x-ms-error-code", "AuthorizationFailure");
    r.status = 403;
    EXPECT_EQ(error_message(r), "AuthorizationFailure (HTTP 403)");
}

TEST(SharefuseConfig, AShareTakesShareNameAndFileEndpointAndNotTheContainersWords) {
    BlobRestSettings s;
    parse_blobfuse_config("accountName a\nsasToken sv=1&sig=x\nshareName work\nfileEndpoint http://127.0.0.1:1/a\n", s,
                          RemoteVolume::share);
    EXPECT_EQ(s.container, "work");
    EXPECT_EQ(s.endpoint, "http://127.0.0.1:1/a");
    try {
        parse_blobfuse_config("containerName work\n", s, RemoteVolume::share);
        ADD_FAILURE() << "a container's key was taken for a share";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "config line 1: containerName: unknown key here (a share takes shareName and fileEndpoint)");
    }
    EXPECT_EQ(parse_blobfuse_command({"/mnt", "--config-file=/x", "--share-name=other"}).container, "other");
    s.follow_changes = false;
    s.endpoint = "ftp://x";
    try {
        ShareRestContainer container{s};
        ADD_FAILURE() << "an ftp endpoint was taken";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "fileEndpoint: not an http(s):// URL: 'ftp://x'");
    }
}

TEST(ShareRestAnswers, AListingNamesFilesAndDirectoriesBelowItsPrefix) {
    const std::string xml =
        "<?xml version=\"1.0\"?><EnumerationResults><Entries>"
        "<File><Name>a.txt</Name><Properties><Content-Length>5</Content-Length>"
        "<LastWriteTime>2026-11-28T06:00:00.0000000Z</LastWriteTime></Properties></File>"
        "<Directory><Name>sub</Name><Properties><Last-Modified>Sat, 28 Nov 2026 07:00:00 GMT</Last-Modified></Properties></Directory>"
        "<File><Name>x/y</Name></File><Link><Name>z</Name></Link><File><Name></Name></File>"
        "</Entries><NextMarker>m</NextMarker></EnumerationResults>";
    storage::BlobListPage page = parse_list_directory(xml, "work", "dir/");
    ASSERT_EQ(page.entries.size(), 2u);  // a name with '/', an unknown element and a nameless one skipped
    EXPECT_FALSE(page.entries[0].is_prefix);
    EXPECT_EQ(page.entries[0].blob.name, "dir/a.txt");
    EXPECT_EQ(page.entries[0].blob.size, 5u);
    EXPECT_EQ(page.entries[0].blob.last_modified, *time::parse_iso8601("2026-11-28T06:00:00Z"));
    EXPECT_TRUE(page.entries[1].is_prefix);
    EXPECT_EQ(page.entries[1].prefix, "dir/sub/");
    EXPECT_EQ(page.entries[1].blob.last_modified, *time::parse_rfc1123("Sat, 28 Nov 2026 07:00:00 GMT"));
    EXPECT_EQ(page.next_marker, "m");
    EXPECT_THROW(parse_list_directory("not xml <", "work", ""), storage::StorageError);
}

TEST(ShareRestAnswers, AFilesTimeIsItsLastWriteTime) {
    httplib::Response r;
    r.headers.emplace("Content-Length", "12");
    r.headers.emplace("Last-Modified", "Sat, 28 Nov 2026 07:00:00 GMT");
    r.headers.emplace("x-ms-file-last-write-time", "2026-11-28T05:00:00.1234567Z");
    r.headers.emplace("x-ms-meta-k", "v");
    storage::BlobInfo info = share_file_info("work", "d/f", r);
    EXPECT_EQ(info.size, 12u);
    EXPECT_EQ(info.last_modified, *time::parse_iso8601("2026-11-28T05:00:00.1234567Z"));
    EXPECT_EQ(info.metadata.at("k"), "v");
    r.headers.erase("x-ms-file-last-write-time");
    EXPECT_EQ(share_file_info("work", "d/f", r).last_modified, *time::parse_rfc1123("Sat, 28 Nov 2026 07:00:00 GMT"));
}

}  // namespace
}  // namespace bai::mounts
