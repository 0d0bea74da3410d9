#include "tools/bai/json_query.h"

#include <gtest/gtest.h>

#include "tools/bai/cli_error.h"

namespace bai::cli {
namespace {

using ojson = nlohmann::ordered_json;  // what query_json answers (clang refuses mixed comparisons)

const ojson kJobs = ojson::parse(R"([
  {"name": "a", "executionState": "succeeded", "nodeCount": 1, "info": {"exitCode": 0}, "tags": ["x", "y"]},
  {"name": "b", "executionState": "failed", "nodeCount": 3, "info": {"exitCode": 2}},
  {"name": "c", "executionState": "running", "nodeCount": 2}
])");

TEST(JsonQuery, FieldsIndexesAndQuotedNames) {
    ojson doc = {{"jobOutputDirectoryPathSegment", "s/rg/j"}, {"a-b", {{"c", 1}}}, {"list", {10, 20, 30}}};
    EXPECT_EQ(query_json(doc, "jobOutputDirectoryPathSegment"), "s/rg/j");
    EXPECT_EQ(query_json(doc, "\"a-b\".c"), 1);
    EXPECT_EQ(query_json(doc, "list[0]"), 10);
    EXPECT_EQ(query_json(doc, "list[-1]"), 30);
    EXPECT_TRUE(query_json(doc, "list[3]").is_null());
    EXPECT_TRUE(query_json(doc, "missing.deeper").is_null());
    EXPECT_EQ(query_json(doc, "@"), doc);
}

TEST(JsonQuery, ProjectionsDropNullsAndApplyTheRestToEachItem) {
    EXPECT_EQ(query_json(kJobs, "[].name"), ojson({"a", "b", "c"}));
    ojson nested = {{{"ids", {"x", "y"}}}, {{"ids", {"z"}}}};
    EXPECT_EQ(query_json(nested, "[].ids[]"), ojson({"x", "y", "z"}));  // [] flattens
    EXPECT_EQ(query_json(nested, "[*].ids[*]"), ojson({{"x", "y"}, {"z"}}));  // [*] does not
    EXPECT_EQ(query_json(kJobs, "[*].info.exitCode"), ojson({0, 2}));
    EXPECT_EQ(query_json(kJobs, "[].tags[0]"), ojson({"x"}));
}

TEST(JsonQuery, FiltersCompareWithLiteralsAndFields) {
    EXPECT_EQ(query_json(kJobs, "[?executionState=='failed'].name"), ojson({"b"}));
    EXPECT_EQ(query_json(kJobs, "[?nodeCount > `1`].name"), ojson({"b", "c"}));
    EXPECT_EQ(query_json(kJobs, "[?nodeCount <= `2`].name"), ojson({"a", "c"}));
    EXPECT_EQ(query_json(kJobs, "[?name != 'a'] | [0].name"), "b");
    EXPECT_EQ(query_json(kJobs, "[?name == executionState]"), ojson::array());
}

TEST(JsonQuery, AHashKeepsTheOrderItsKeysAreWrittenIn) {
    auto result = query_json(kJobs[1], "{State: executionState, Name: name}");
    std::vector<std::string> keys;
    for (const auto& [key, _] : result.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"State", "Name"}));
}

TEST(JsonQuery, MultiselectHashesAndLists) {
    EXPECT_EQ(query_json(kJobs, "[].{Name: name, Nodes: nodeCount}")[1], ojson({{"Name", "b"}, {"Nodes", 3}}));
    EXPECT_EQ(query_json(kJobs[0], "[name, info.exitCode]"), ojson({"a", 0}));
    EXPECT_EQ(query_json(kJobs, "[].[name, nodeCount] | [2]"), ojson({"c", 2}));
}

TEST(JsonQuery, DeepNestingIsRefusedNotRecursedInto) {
    std::string deep(5000, '[');
    EXPECT_THROW(query_json(kJobs, deep), CliError);
    std::string hashes;
    for (int i = 0; i < 200; ++i) hashes += "{a: ";
    EXPECT_THROW(query_json(kJobs, hashes), CliError);
    std::string pipes = "a";
    for (int i = 0; i < 100; ++i) pipes += " | a";
    EXPECT_THROW(query_json(kJobs, pipes), CliError);
    EXPECT_TRUE(query_json(kJobs, "a | a | a").is_null());  // a few are fine
}

TEST(JsonQuery, BadExpressionsAreUsageErrorsWithTheOffset) {
    for (const char* bad : {"", "a.", "[?name=='x'", "{a name}", "a[", "'unterminated", "a.*", "[?a ~ b]", "a..b",
                            "`{bad`", "a | ", "[0"}) {
        try {
            query_json(kJobs, bad);
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const CliError& e) {
            EXPECT_EQ(e.exit_code, kExitUsage) << bad;
            EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace bai::cli
