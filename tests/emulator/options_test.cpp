#include "emulator/daemon/options.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

namespace bai::daemon {
namespace {

TEST(Options, DefaultsAreTheDocumentedOnes) {
    Options o = parse_options({});
    EXPECT_EQ(o.location, "batchai-data");
    EXPECT_EQ(o.host, "127.0.0.1");
    EXPECT_EQ(o.arm_port, 10443);
    EXPECT_EQ(o.blob_port, 10000);
    EXPECT_EQ(o.file_port, 10004);
    EXPECT_EQ(o.batch_port, 10447);
    EXPECT_EQ(o.proxy_port, 10080);
    EXPECT_TRUE(o.batch_accounts.empty());
    EXPECT_FALSE(o.debug_log.has_value());
    EXPECT_EQ(o.gpus.kind, engine::GpuSource::Kind::automatic);
}

TEST(Options, BindAllListensEverywhereInAContainerOnlyAndKeepsTheUrlsHost) {
    EXPECT_FALSE(parse_options({}).bind_all);
    EXPECT_EQ(parse_options({"--host", "127.0.0.2"}).listen_address(), "127.0.0.2");
    const bool in_container = std::filesystem::exists("/.dockerenv") || std::filesystem::exists("/run/.containerenv");
    if (in_container) {
        Options o = parse_options({"--bind-all", "--host", "127.0.0.2"});
        EXPECT_TRUE(o.bind_all);
        EXPECT_EQ(o.listen_address(), "0.0.0.0");
        EXPECT_EQ(o.host, "127.0.0.2");  // the URLs' host
    } else {
        try {
            parse_options({"--bind-all"});
            FAIL() << "--bind-all taken outside a container";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("container"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_options({"--bind-all=yes"}), std::invalid_argument);  // a switch takes no value
}

TEST(Options, PublicHostNamesTheUrlsAndIsAHostNameOnly) {
    EXPECT_EQ(parse_options({}).url_host(), "127.0.0.1");
    EXPECT_EQ(parse_options({"--public-host", "batchai"}).url_host(), "batchai");
    EXPECT_EQ(parse_options({"--public-host=ci-svc.example.internal"}).url_host(), "ci-svc.example.internal");
    EXPECT_EQ(parse_options({"--public-host", "10.0.0.7"}).url_host(), "10.0.0.7");
    EXPECT_EQ(parse_options({"--public-host", "batchai"}).listen_address(), "127.0.0.1");  // still loopback
    for (const char* bad : {"", "-batchai", "batchai-", "a..b", ".a", "a.", "bat chai", "batchai:10443", "user@host",
                            "host/path", "0.0.0.0", "[::1]"}) {
        EXPECT_THROW(parse_options({"--public-host", bad}), std::invalid_argument) << bad;
    }
    EXPECT_THROW(parse_options({"--public-host", std::string(64, 'a')}), std::invalid_argument);  // a label past 63
}

TEST(Options, ParsesEveryFlagInBothForms) {
    Options o = parse_options({"--location", "/tmp/x", "--host=127.0.1.5", "--arm-port", "0",
                               "--blob-port=0", "--file-port", "12345", "--account",
                               "acct1:a2V5", "--account=acct2:a2V5", "--debug", "/tmp/log"});
    EXPECT_EQ(o.location, "/tmp/x");
    EXPECT_EQ(o.host, "127.0.1.5");
    EXPECT_EQ(o.arm_port, 0);
    EXPECT_EQ(o.blob_port, 0);
    EXPECT_EQ(o.file_port, 12345);
    ASSERT_EQ(o.accounts.size(), 2u);
    EXPECT_EQ(o.accounts[1].name, "acct2");
    EXPECT_EQ(*o.debug_log, "/tmp/log");
    Options b = parse_options({"--batch-port", "0", "--proxy-port", "0", "--batch-account", "team1:a2V5", "--batch-account=team2:a2V5"});
    EXPECT_EQ(b.batch_port, 0);
    EXPECT_EQ(b.proxy_port, 0);
    ASSERT_EQ(b.batch_accounts.size(), 2u);
    EXPECT_EQ(b.batch_accounts[0].name, "team1");
    EXPECT_EQ(b.batch_accounts[1].key, "a2V5");
    EXPECT_TRUE(parse_options({"--version"}).show_version);
    EXPECT_EQ(parse_options({"--gpus=fake:2"}).gpus.fake_count, 2);
    EXPECT_EQ(parse_options({"--gpus", "none"}).gpus.kind, engine::GpuSource::Kind::none);
    EXPECT_FALSE(parse_options({}).strict_gpus);
    EXPECT_TRUE(parse_options({"--strict-gpus"}).strict_gpus);
    EXPECT_TRUE(parse_options({}).share_passthrough);
    EXPECT_FALSE(parse_options({"--no-passthrough"}).share_passthrough);
    EXPECT_THROW(parse_options({"--no-passthrough=1"}), std::invalid_argument);
    EXPECT_FALSE(parse_options({}).bind_shares);
    EXPECT_TRUE(parse_options({"--share-mounts", "bind"}).bind_shares);
    EXPECT_FALSE(parse_options({"--share-mounts=fuse"}).bind_shares);
    try {
        parse_options({"--share-mounts", "nfs"});
        ADD_FAILURE() << "--share-mounts nfs was taken";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("--share-mounts must be fuse or bind"), std::string::npos) << e.what();
    }
    EXPECT_EQ(parse_options({}).autoscale_idle_ms, 10000);
    EXPECT_EQ(parse_options({"--autoscale-idle", "250"}).autoscale_idle_ms, 250);
    EXPECT_THROW(parse_options({"--autoscale-idle", "-1"}), std::invalid_argument);
}

TEST(Options, ContainerFlags) {
    Options o = parse_options({"--container-runtime", "sandbox", "--image", "ubuntu:16.04=/tmp", "--image=tf=/",
                               "--strict-images"});
    EXPECT_EQ(o.containers.choice, engine::RuntimeChoice::sandbox);
    EXPECT_EQ(o.containers.images.at("ubuntu:16.04"), "/tmp");
    EXPECT_EQ(o.containers.images.at("tf"), "/");
    EXPECT_TRUE(o.containers.strict_images);
    Options defaults = parse_options({});
    EXPECT_EQ(defaults.containers.choice, engine::RuntimeChoice::automatic);
    EXPECT_FALSE(defaults.containers.strict_images);
    EXPECT_TRUE(defaults.containers.images.empty());
}

void expect_rejected(const std::vector<std::string>& args, const std::string& mentions);

TEST(Options, BadContainerFlagsNameTheFlag) {
    expect_rejected({"--container-runtime", "podman"}, "--container-runtime");
    expect_rejected({"--image", "ubuntu"}, "--image");
    expect_rejected({"--image", "ubuntu=/no/such/dir"}, "/no/such/dir");
    expect_rejected({"--strict-images=yes"}, "--strict-images");
}

void expect_rejected(const std::vector<std::string>& args, const std::string& mentions) {
    try {
        parse_options(args);
        FAIL() << "accepted " << args[0];
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
    }
}

TEST(Options, RejectsBadValuesNamingTheFlag) {
    expect_rejected({"--arm-port", "65536"}, "--arm-port");
    expect_rejected({"--blob-port", "-1"}, "--blob-port");
    expect_rejected({"--file-port", "12ab"}, "--file-port");
    expect_rejected({"--arm-port"}, "--arm-port needs a value");
    expect_rejected({"--host", "0.0.0.0"}, "loopback");
    expect_rejected({"--host", "10.1.2.3"}, "loopback");
    expect_rejected({"--account", "BAD:a2V5"}, "--account");
    expect_rejected({"--batch-port", "70000"}, "--batch-port");
    expect_rejected({"--batch-account", "team1"}, "--batch-account takes NAME:KEY");
    expect_rejected({"--batch-account", "team1:not base64!"}, "--batch-account: the key of 'team1' is not base64");
    expect_rejected({"--frobnicate"}, "--frobnicate");
    expect_rejected({"--version=1"}, "--version=1");
    expect_rejected({"--gpus", "fake:many"}, "--gpus");
    expect_rejected({"--compute", "slurm", "--slurm-storage", "nfs"}, "--slurm-storage must be shared or rest");
    expect_rejected({"--slurm-storage", "rest"}, "--slurm-storage is for --compute slurm");
    EXPECT_TRUE(parse_options({"--compute", "slurm", "--slurm-storage", "rest"}).slurm_rest_storage);
    EXPECT_FALSE(parse_options({"--compute", "slurm", "--slurm-storage=shared"}).slurm_rest_storage);
    EXPECT_EQ(parse_options({"--compute", "slurm", "--slurm-file-endpoint", "http://head:10001/"}).slurm_file_endpoint,
              "http://head:10001");
    expect_rejected({"--compute", "slurm", "--slurm-blob-endpoint", "head:10000"}, "--slurm-blob-endpoint takes http(s)://HOST:PORT");
    expect_rejected({"--compute", "slurm", "--slurm-blob-endpoint", "http://head:10000/devstoreaccount1"},
                    "--slurm-blob-endpoint takes");
    expect_rejected({"--slurm-file-endpoint", "http://head:1"}, "are for --compute slurm");
}

TEST(Options, LoopbackHosts) {
    EXPECT_TRUE(is_loopback_host("127.0.0.1"));
    EXPECT_TRUE(is_loopback_host("127.255.0.9"));
    EXPECT_TRUE(is_loopback_host("localhost"));
    EXPECT_TRUE(is_loopback_host("::1"));
    EXPECT_FALSE(is_loopback_host("128.0.0.1"));
    EXPECT_FALSE(is_loopback_host("example.com"));
}

}  // namespace
}  // namespace bai::daemon
