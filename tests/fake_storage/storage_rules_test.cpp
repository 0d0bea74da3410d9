// Names, conditional headers, ranges, SharedKey canonicalization and SAS checks, without HTTP.
#include <gtest/gtest.h>

#include "common/crypto/base64.h"
#include "common/crypto/digest.h"
#include "common/http/proxied_host.h"
#include "fake_storage/auth/sas.h"
#include "fake_storage/auth/shared_key.h"
#include "fake_storage/engine/conditions.h"
#include "fake_storage/engine/names.h"
#include "fake_storage/engine/storage_error.h"
#include "fake_storage/http/storage_headers.h"
#include "tests/fake_storage/error_code.h"

namespace bai::storage {
namespace {

using testing::code_of;

TEST(Names, ContainersAndShares) {
    EXPECT_TRUE(is_valid_container_name("abc"));
    EXPECT_TRUE(is_valid_container_name("a-b-1"));
    EXPECT_TRUE(is_valid_container_name("$root"));
    EXPECT_FALSE(is_valid_container_name("ab"));
    EXPECT_FALSE(is_valid_container_name(std::string(64, 'a')));
    EXPECT_FALSE(is_valid_container_name("a--b"));
    EXPECT_FALSE(is_valid_container_name("-ab"));
    EXPECT_FALSE(is_valid_container_name("Abc"));
    EXPECT_FALSE(is_valid_share_name("$root"));
}

TEST(Names, BlobNamesAreUtf8WithoutNul) {
    EXPECT_TRUE(is_valid_blob_name("dir/../x y+z.txt"));
    EXPECT_TRUE(is_valid_blob_name("\xc3\xa9t\xc3\xa9"));
    EXPECT_FALSE(is_valid_blob_name(""));
    EXPECT_FALSE(is_valid_blob_name(std::string("a\0b", 3)));
    EXPECT_FALSE(is_valid_blob_name("\xff"));
    EXPECT_FALSE(is_valid_blob_name("\xc3"));             // truncated sequence
    EXPECT_FALSE(is_valid_blob_name("\xed\xa0\x80"));     // surrogate
    EXPECT_FALSE(is_valid_blob_name(std::string(1025, 'n')));
}

TEST(Names, SharePathsAreSplitAndChecked) {
    EXPECT_EQ(split_share_path("a/b/c.txt"), (std::vector<std::string>{"a", "b", "c.txt"}));
    EXPECT_EQ(split_share_path("/lead/trail/"), (std::vector<std::string>{"lead", "trail"}));
    EXPECT_TRUE(split_share_path("").empty());
    for (const std::string& bad : std::vector<std::string>{"..", "a/../b", "./a", "a//b", "a\\b", "a:b", "a|b", "a*", "a?", "a\"b",
                            std::string("a\x01", 2), std::string(256, 'x')}) {
        EXPECT_EQ(code_of([&] { split_share_path(bad); }), "400 InvalidResourceName") << bad;
    }
}

TEST(Conditions, ReadsGive304Or412) {
    Version v{"\"0x1\"", time::from_ticks(1'000'000'000LL * 10'000'000 / 10'000'000)};
    Conditions c;
    c.if_none_match = "\"0x1\"";
    EXPECT_EQ(code_of([&] { check_read_conditions(c, v); }), "304 ConditionNotMet");
    c = {};
    c.if_match = "\"0x2\", \"0x3\"";
    EXPECT_EQ(code_of([&] { check_read_conditions(c, v); }), "412 ConditionNotMet");
    c.if_match = "W/\"0x3\", 0x1";  // unquoted and weak forms compare by value
    EXPECT_EQ(code_of([&] { check_read_conditions(c, v); }), "no error");
    c = {};
    c.if_modified_since = v.last_modified;
    EXPECT_EQ(code_of([&] { check_read_conditions(c, v); }), "304 ConditionNotMet");
}

TEST(Conditions, WritesGive409Or412) {
    Version v{"\"0x1\"", time::now()};
    Conditions any;
    any.if_none_match = "*";
    EXPECT_EQ(code_of([&] { check_write_conditions(any, v, "BlobAlreadyExists", "exists"); }),
              "409 BlobAlreadyExists");
    EXPECT_EQ(code_of([&] { check_write_conditions(any, std::nullopt, "BlobAlreadyExists", "x"); }),
              "no error");
    Conditions match;
    match.if_match = "*";
    EXPECT_EQ(code_of([&] { check_write_conditions(match, std::nullopt, "X", "x"); }),
              "412 ConditionNotMet");
    EXPECT_EQ(code_of([&] { check_write_conditions(match, v, "X", "x"); }), "no error");
}

// Percent-encodes what base64 signatures contain, as clients do in query strings.
std::string query_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '+') out += "%2B";
        else if (c == '/') out += "%2F";
        else if (c == '=') out += "%3D";
        else out += c;
    }
    return out;
}

httplib::Request make_request(const std::string& method, const std::string& target,
                              std::initializer_list<std::pair<std::string, std::string>> headers) {
    httplib::Request r;
    r.method = method;
    r.target = target;
    r.remote_addr = "127.0.0.1";
    for (const auto& [k, v] : headers) r.headers.emplace(k, v);
    return r;
}

TEST(SharedKey, StringToSignFollowsTheServiceLayout) {
    auto http = make_request("PUT", "/devstoreaccount1/c/a%20b?comp=block&blockid=YQ%3D%3D",
                             {{"x-ms-version", " 2021-06-08 "},
                              {"X-MS-Date", "Sun, 22 Nov 2026 04:15:00 GMT"},
                              {"Content-Length", "0"},
                              {"Content-Type", "application/octet-stream"},
                              {"CommandName", "ignored"}});
    StorageRequest r = parse_storage_request(http);
    EXPECT_EQ(r.name, "a b");
    EXPECT_EQ(shared_key_string_to_sign(r, r.raw_path),
              "PUT\n\n\n\n\napplication/octet-stream\n\n\n\n\n\n\n"
              "x-ms-date:Sun, 22 Nov 2026 04:15:00 GMT\nx-ms-version:2021-06-08\n"
              "/devstoreaccount1/devstoreaccount1/c/a%20b\nblockid:YQ==\ncomp:block");
}

TEST(SharedKey, AcceptsTheRightKeyAndRefusesOthers) {
    Account account{"devstoreaccount1", std::string(kDevAccountKey), std::string(kDevAccountKey)};
    auto http = make_request("GET", "/devstoreaccount1/c/b", {{"x-ms-date", "now"}, {"x-ms-version", "2021-06-08"}});
    StorageRequest r = parse_storage_request(http);
    std::string signature = crypto::base64_encode(
        crypto::hmac_sha256(*crypto::base64_decode(kDevAccountKey), shared_key_string_to_sign(r, r.raw_path)));
    http.headers.emplace("Authorization", "SharedKey devstoreaccount1:" + signature);
    EXPECT_EQ(code_of([&] { verify_shared_key(r, account); }), "no error");
    account.key1 = account.key2 = crypto::base64_encode("another key");
    EXPECT_EQ(code_of([&] { verify_shared_key(r, account); }), "403 AuthenticationFailed");
}

TEST(SharedKey, AHostStyleRequestIsSignedForThePathItWasSentWith) {
    // ACCOUNT.blob.core.windows.net through the proxy front door: the client signs "/ACCOUNT/c/b",
    // not the path-style "/ACCOUNT/ACCOUNT/c/b".
    Account account{"devstoreaccount1", std::string(kDevAccountKey), std::string(kDevAccountKey)};
    const http::ProxiedHostScope host("devstoreaccount1.blob.core.windows.net");
    auto http = make_request("GET", "/c/b%20x", {{"x-ms-date", "now"}, {"x-ms-version", "2021-06-08"}});
    StorageRequest r = parse_storage_request(http);
    EXPECT_TRUE(r.host_style);
    EXPECT_EQ(r.account, "devstoreaccount1");
    EXPECT_EQ(r.container, "c");
    EXPECT_EQ(r.name, "b x");
    auto sign = [&](const std::string& path) {
        return crypto::base64_encode(crypto::hmac_sha256(*crypto::base64_decode(kDevAccountKey), shared_key_string_to_sign(r, path)));
    };
    http.headers.emplace("Authorization", "SharedKey devstoreaccount1:" + sign("/c/b%20x"));
    EXPECT_EQ(code_of([&] { verify_shared_key(r, account); }), "no error");
    // The path-style form of the same request is not what a host-style client signs.
    http.headers.erase("Authorization");
    http.headers.emplace("Authorization", "SharedKey devstoreaccount1:" + sign(r.raw_path));
    EXPECT_EQ(code_of([&] { verify_shared_key(r, account); }), "403 AuthenticationFailed");
}

TEST(StorageRequest, TheSecondaryHostNamesTheAccountsSecondary) {
    const http::ProxiedHostScope host("acct1-secondary.file.core.windows.net");
    auto http = make_request("GET", "/share/dir/f?comp=list", {});
    StorageRequest r = parse_storage_request(http);
    EXPECT_EQ(r.account, "acct1-secondary");  // the endpoint takes -secondary off, as for a path-style URL
    EXPECT_EQ(r.container, "share");
    EXPECT_EQ(r.name, "dir/f");
    EXPECT_EQ(r.raw_path, "/acct1-secondary/share/dir/f");
}

TEST(Sas, ServiceSasChecksSignatureTimePermissionAndScope) {
    Account account{"devstoreaccount1", std::string(kDevAccountKey), std::string(kDevAccountKey)};
    auto sign = [&](const std::string& query, const SasNeed& need) {
        auto http = make_request("GET", "/devstoreaccount1/c/b?" + query, {});
        StorageRequest r = parse_storage_request(http);
        std::string signature = crypto::base64_encode(crypto::hmac_sha256(
            *crypto::base64_decode(kDevAccountKey), sas_string_to_sign(r, account.name, need)));
        return query + "&sig=" + query_escape(signature);
    };
    auto verify = [&](const std::string& query, const SasNeed& need) {
        auto http = make_request("GET", "/devstoreaccount1/c/b?" + query, {});
        StorageRequest r = parse_storage_request(http);
        return code_of([&] { verify_sas(r, account, need, time::now()); });
    };
    const SasRule read{ResourceLevel::object, "r", "r", ServiceSasScope::container_or_object};
    SasNeed read_blob{SasService::blob, "c", "b", read};
    std::string query = "sv=2021-06-08&sr=b&sp=r&se=2099-01-01T00:00:00Z";
    std::string signed_query = sign(query, read_blob);
    EXPECT_EQ(verify(signed_query, read_blob), "no error");
    EXPECT_EQ(verify(signed_query + "x", read_blob), "403 AuthenticationFailed");  // tampered sig
    SasNeed write_blob = read_blob;
    write_blob.rule.account_letters = write_blob.rule.service_letters = "cw";
    EXPECT_EQ(verify(sign(query, write_blob), write_blob), "403 AuthorizationPermissionMismatch");
    SasNeed list_container{SasService::blob, "c", "", {ResourceLevel::container, "l", "l", ServiceSasScope::container}};
    std::string blob_scoped = "sv=2021-06-08&sr=b&sp=rl&se=2099-01-01T00:00:00Z";
    EXPECT_EQ(verify(sign(blob_scoped, list_container), list_container),
              "403 AuthorizationResourceTypeMismatch");
    std::string expired = "sv=2021-06-08&sr=b&sp=r&se=2001-01-01T00:00:00Z";
    EXPECT_EQ(verify(sign(expired, read_blob), read_blob), "403 AuthenticationFailed");
    std::string elsewhere = "sv=2021-06-08&sr=b&sp=r&se=2099-01-01T00:00:00Z&sip=10.0.0.1";
    EXPECT_EQ(verify(sign(elsewhere, read_blob), read_blob), "403 AuthorizationSourceIPMismatch");
    std::string https_only = "sv=2021-06-08&sr=b&sp=r&se=2099-01-01T00:00:00Z&spr=https";
    EXPECT_EQ(verify(sign(https_only, read_blob), read_blob), "403 AuthorizationProtocolMismatch");
    // The same parameter twice, even with the same value, is refused before anything else.
    EXPECT_EQ(verify(signed_query + "&sp=r", read_blob), "403 AuthenticationFailed");
    EXPECT_EQ(verify(signed_query + "&SIG=x", read_blob), "403 AuthenticationFailed");
    SasNeed container_itself{SasService::blob, "c", "", account_only(ResourceLevel::container, "w")};
    std::string container_scoped = "sv=2021-06-08&sr=c&sp=racwdl&se=2099-01-01T00:00:00Z";
    EXPECT_EQ(verify(sign(container_scoped, container_itself), container_itself), "403 AuthorizationFailure");
}

TEST(Sas, CreateAloneGrantsCreatingNotReplacing) {
    Account account{"devstoreaccount1", std::string(kDevAccountKey), std::string(kDevAccountKey)};
    SasNeed put_blob{SasService::blob, "c", "b",
                     {ResourceLevel::object, "cw", "cw", ServiceSasScope::container_or_object, true}};
    auto grant = [&](const std::string& permissions) {
        std::string query = "sv=2021-06-08&sr=b&sp=" + permissions + "&se=2099-01-01T00:00:00Z";
        auto unsigned_http = make_request("GET", "/devstoreaccount1/c/b?" + query, {});
        StorageRequest unsigned_request = parse_storage_request(unsigned_http);
        std::string signature = crypto::base64_encode(crypto::hmac_sha256(
            *crypto::base64_decode(kDevAccountKey), sas_string_to_sign(unsigned_request, account.name, put_blob)));
        auto http = make_request("GET", "/devstoreaccount1/c/b?" + query + "&sig=" + query_escape(signature), {});
        return verify_sas(parse_storage_request(http), account, put_blob, time::now());
    };
    EXPECT_TRUE(grant("c").create_new_only);
    EXPECT_FALSE(grant("cw").create_new_only);
    EXPECT_FALSE(grant("w").create_new_only);
}

TEST(Sas, AccountSasChecksServiceAndResourceType) {
    Account account{"devstoreaccount1", std::string(kDevAccountKey), std::string(kDevAccountKey)};
    SasNeed list_shares{SasService::file, "", "", account_only(ResourceLevel::service, "l")};
    auto check = [&](const std::string& query) {
        auto http = make_request("GET", "/devstoreaccount1?" + query, {});
        StorageRequest r = parse_storage_request(http);
        std::string signature = crypto::base64_encode(crypto::hmac_sha256(
            *crypto::base64_decode(kDevAccountKey), sas_string_to_sign(r, account.name, list_shares)));
        auto signed_http = make_request("GET", "/devstoreaccount1?" + query + "&sig=" + query_escape(signature), {});
        StorageRequest signed_request = parse_storage_request(signed_http);
        return code_of([&] { verify_sas(signed_request, account, list_shares, time::now()); });
    };
    EXPECT_EQ(check("sv=2021-06-08&ss=f&srt=s&sp=l&se=2099-01-01T00:00:00Z"), "no error");
    EXPECT_EQ(check("sv=2021-06-08&ss=b&srt=s&sp=l&se=2099-01-01T00:00:00Z"), "403 AuthorizationServiceMismatch");
    EXPECT_EQ(check("sv=2021-06-08&ss=f&srt=co&sp=l&se=2099-01-01T00:00:00Z"),
              "403 AuthorizationResourceTypeMismatch");
}

TEST(Ranges, XmsRangeWinsAndMalformedOnesAreRefused) {
    auto range_of = [](std::initializer_list<std::pair<std::string, std::string>> headers) {
        auto http = make_request("GET", "/a/c/b", headers);
        StorageRequest r = parse_storage_request(http);
        return read_range(r);
    };
    auto both = range_of({{"Range", "bytes=0-1"}, {"x-ms-range", "bytes=5-"}});
    ASSERT_TRUE(both.has_value());
    EXPECT_EQ(both->first, 5u);
    EXPECT_FALSE(both->last.has_value());
    EXPECT_FALSE(range_of({}).has_value());
    for (const std::string& bad : std::vector<std::string>{"bytes=", "bytes=a-1", "bytes=3-1", "items=0-1", "bytes=-5", "bytes=1-2x"}) {
        EXPECT_EQ(code_of([&] { range_of({{"x-ms-range", bad}}); }), "400 InvalidHeaderValue") << bad;
    }
}

}  // namespace
}  // namespace bai::storage
