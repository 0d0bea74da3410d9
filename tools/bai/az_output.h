// How bai prints results, as the az CLI (knack) did: -o json (keys sorted, indent 2), table
// (the command's columns; with --query, every scalar field in the query's order), tsv (values
// of each row: keys sorted, or in the query's order; lists print their length, objects nothing).
// Resources are shown as the SDK gave them to az: `properties` flattened into the top level,
// `resourceGroup` added to every object with a resource id.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bai::cli {

enum class OutputFormat { json, table, tsv, none };

// Throws CliError (usage) for an unknown name; accepts json, jsonc, table, tsv, none.
OutputFormat parse_output_format(const std::string& name);

nlohmann::json az_view(const nlohmann::json& resource);
nlohmann::json az_view_list(const nlohmann::json& resources);

struct Column {
    std::string header;
    std::string query;  // a --query expression evaluated on each row
    // Or a function of the row, for cells no expression can make (a name taken from an id).
    std::function<nlohmann::json(const nlohmann::json&)> compute = nullptr;
};

// The table of `cluster list-nodes` and `job list-nodes`: each node's remote login settings.
extern const std::vector<Column> kRemoteLoginTable;

// Applies `query` (when not empty) and prints. `columns` are the command's table; empty: every
// scalar field.
// The segment after `/<collection>/` in a resource id (case-insensitive), "" when absent.
std::string id_segment(const std::string& id, const std::string& collection);
// The workspace of a row's id, for tables (null when it has none).
nlohmann::json workspace_cell(const nlohmann::json& row);

void print_result(const nlohmann::json& result, OutputFormat format, const std::string& query,
                  const std::vector<Column>& columns);

// Rows as given: a key order of their own (a query's), or sorted (a plain json's).
std::string render_table(const nlohmann::ordered_json& rows, const std::vector<Column>& columns);
std::string render_tsv(const nlohmann::ordered_json& result);

}  // namespace bai::cli
