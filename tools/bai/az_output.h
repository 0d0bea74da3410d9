// How bai prints results, as the az CLI (knack) did: -o json (keys sorted, indent 2), table
// (the command's columns, or every scalar field when --query is active), tsv (values of each
// row, keys sorted; lists print their length, objects nothing). Resources are shown as the SDK
// gave them to az: `properties` flattened into the top level, `resourceGroup` added, nulls gone.
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

// Applies `query` (when not empty) and prints. `columns` are the command's table; empty: every
// scalar field.
void print_result(const nlohmann::json& result, OutputFormat format, const std::string& query,
                  const std::vector<Column>& columns);

std::string render_table(const nlohmann::json& rows, const std::vector<Column>& columns);
std::string render_tsv(const nlohmann::json& result);

}  // namespace bai::cli
