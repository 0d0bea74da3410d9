#include "fake_storage/accounts/account_registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace bai::storage {
namespace {

TEST(AccountRegistry, AlwaysHasTheDevelopmentAccount) {
    AccountRegistry registry;
    auto dev = registry.find("devstoreaccount1");
    ASSERT_TRUE(dev.has_value());
    EXPECT_EQ(dev->key1, kDevAccountKey);
}

TEST(AccountRegistry, AddsFindsAndRemovesAccounts) {
    AccountRegistry registry;
    registry.put(parse_account_flag("mydata:a2V5a2V5"));
    ASSERT_TRUE(registry.find("mydata").has_value());
    EXPECT_EQ(registry.find("mydata")->key1, "a2V5a2V5");
    EXPECT_EQ(registry.names(), (std::vector<std::string>{"devstoreaccount1", "mydata"}));
    EXPECT_TRUE(registry.remove("mydata"));
    EXPECT_FALSE(registry.remove("mydata"));
    EXPECT_FALSE(registry.find("mydata").has_value());
}

TEST(AccountFlag, RefusesBadNamesAndKeys) {
    EXPECT_THROW(parse_account_flag("nokey"), std::invalid_argument);
    EXPECT_THROW(parse_account_flag("ab:a2V5"), std::invalid_argument);          // too short
    EXPECT_THROW(parse_account_flag("UPPER:a2V5"), std::invalid_argument);       // case
    EXPECT_THROW(parse_account_flag("with-dash:a2V5"), std::invalid_argument);   // dash
    EXPECT_THROW(parse_account_flag("abcdefghijklmnopqrstuvwxy:a2V5"), std::invalid_argument);
    EXPECT_THROW(parse_account_flag("good:not base64!"), std::invalid_argument);
    EXPECT_THROW(parse_account_flag("good:"), std::invalid_argument);
    try {
        parse_account_flag("good:???");
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("good"), std::string::npos);
    }
}

TEST(AzuriteAccounts, ReadsAccountsAndKeysAsAzuriteDoes) {
    auto accounts = parse_azurite_accounts(std::string("devstoreaccount1:") + std::string(kDevAccountKey) +
                                           ":testing_key;acct2:YWJj;");
    ASSERT_EQ(accounts.size(), 2u);
    EXPECT_EQ(accounts[0].key1, kDevAccountKey);
    // Node's lenient base64: '_' is the URL-safe 63, the trailing bits dropped.
    EXPECT_EQ(accounts[0].key2, "testing/kew=");
    EXPECT_EQ(accounts[1].name, "acct2");
    EXPECT_EQ(accounts[1].key1, "YWJj");
    EXPECT_EQ(accounts[1].key2, "YWJj");  // one key: both
    EXPECT_TRUE(parse_azurite_accounts("").empty());
    for (const char* bad : {"acct2", "Acct2:YWJj", "acct2:YWJj:YWJj:YWJj", "acct2:!!!", "ab:YWJj"}) {
        EXPECT_THROW(parse_azurite_accounts(bad), std::invalid_argument) << bad;
    }
}

TEST(ConnectionString, NamesBothEndpointsPathStyle) {
    Account a{"acct1", "a2V5", "a2V5"};
    EXPECT_EQ(connection_string(a, "http://127.0.0.1:1", "http://127.0.0.1:2"),
              "DefaultEndpointsProtocol=http;AccountName=acct1;AccountKey=a2V5;"
              "BlobEndpoint=http://127.0.0.1:1/acct1;FileEndpoint=http://127.0.0.1:2/acct1;");
}

}  // namespace
}  // namespace bai::storage
