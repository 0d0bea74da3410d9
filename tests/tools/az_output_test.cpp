#include "tools/bai/az_output.h"

#include <gtest/gtest.h>

#include "tools/bai/cli_error.h"

namespace bai::cli {
namespace {

using nlohmann::json;

TEST(AzView, FlattensPropertiesAndAddsTheGroupToEveryObjectWithAnId) {
    json cluster = {{"id", "/subscriptions/s/resourceGroups/other/providers/Microsoft.BatchAI/workspaces/w/clusters/c"}};
    json resource = {{"id", "/subscriptions/s/resourceGroups/My-RG/providers/Microsoft.BatchAI/workspaces/w"},
                     {"name", "w"},
                     {"location", nullptr},
                     {"properties", {{"provisioningState", "succeeded"}, {"cluster", cluster}, {"nested", {{"b", 1}}}}}};
    json view = az_view(resource);
    json with_group = cluster;
    with_group["resourceGroup"] = "other";
    EXPECT_EQ(view, json({{"id", resource["id"]},
                          {"name", "w"},
                          {"location", nullptr},  // what the server sent, null included
                          {"provisioningState", "succeeded"},
                          {"cluster", with_group},
                          {"nested", {{"b", 1}}},
                          {"resourceGroup", "My-RG"}}));
    EXPECT_EQ(az_view(json("text")), "text");
    EXPECT_EQ(workspace_cell(resource), "w");
    EXPECT_TRUE(workspace_cell(json::object()).is_null());
    EXPECT_EQ(id_segment(cluster["id"], "Clusters"), "c");
}

TEST(AzTable, TheCommandsColumnsOrEveryScalarField) {
    json rows = {{{"name", "a"}, {"id", "/x"}, {"n", 1}, {"ok", true}, {"obj", {{"x", 1}}}},
                 {{"name", "bbbbbb"}, {"n", 22}}};
    EXPECT_EQ(render_table(rows, {}),
              "N   Name    Ok\n"
              "--  ------  ----\n"
              "1   a       True\n"
              "22  bbbbbb\n");
    EXPECT_EQ(render_table(rows, {{"Job", "name"}, {"Count", "n"}}),
              "Job     Count\n"
              "------  -----\n"
              "a       1\n"
              "bbbbbb  22\n");
    EXPECT_EQ(render_table(json("x"), {}), "Result\n------\nx\n");
    EXPECT_EQ(render_table(json::array(), {{"Name", "name"}}), "");  // knack printed nothing
}

TEST(AzOutput, AQueryKeepsItsKeyOrderInTablesAndTsv) {
    nlohmann::ordered_json row = {{"State", "failed"}, {"Name", "j"}};
    EXPECT_EQ(render_tsv(row), "failed\tj\n");
    EXPECT_EQ(render_table(nlohmann::ordered_json::array({row}), {}), "State   Name\n------  ----\nfailed  j\n");
}

TEST(AzTsv, RowsOfValuesInKeyOrder) {
    EXPECT_EQ(render_tsv(json({{"b", 2}, {"a", "x"}, {"list", {1, 2, 3}}, {"o", {{"k", 1}}}})), "x\t2\t3\t\n");
    EXPECT_EQ(render_tsv(json({"one", "two"})), "one\ntwo\n");
    EXPECT_EQ(render_tsv(json(true)), "true\n");
    EXPECT_EQ(render_tsv(json({{"flag", false}})), "False\n");
}

TEST(AzOutput, UnknownFormatIsAUsageError) {
    EXPECT_EQ(parse_output_format("jsonc"), OutputFormat::json);
    EXPECT_EQ(parse_output_format("tsv"), OutputFormat::tsv);
    try {
        parse_output_format("yaml");
        ADD_FAILURE();
    } catch (const CliError& e) {
        EXPECT_EQ(e.exit_code, kExitUsage);
    }
}

}  // namespace
}  // namespace bai::cli
