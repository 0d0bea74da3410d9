#include "tools/bai/az_output.h"

#include <algorithm>
#include <cstdio>

#include "common/text/ascii.h"
#include "tools/bai/cli_error.h"
#include "tools/bai/json_query.h"

namespace bai::cli {

const std::vector<Column> kRemoteLoginTable = {{"ID", "nodeId"}, {"IP", "ipAddress"}, {"SSH Port", "port"}};

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// az's _add_resource_group: every object with an id gets the group the id names.
void add_resource_groups(json& value) {
    if (value.is_array()) {
        for (json& item : value) add_resource_groups(item);
        return;
    }
    if (!value.is_object()) return;
    if (!value.contains("resourceGroup") && value.contains("id") && value["id"].is_string()) {
        std::string group = id_segment(value["id"].get<std::string>(), "resourceGroups");
        if (!group.empty()) value["resourceGroup"] = group;
    }
    for (auto& [key, item] : value.items()) {
        if (key != "sourceVault") add_resource_groups(item);
    }
}


// Python's str() of a scalar, as table and tsv cells show it.
std::string cell(const ordered_json& value) {
    if (value.is_null()) return "";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
    return value.dump();
}

bool scalar(const ordered_json& value) { return !value.is_object() && !value.is_array() && !value.is_null(); }

std::string capitalize(std::string key) {
    if (!key.empty()) key[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(key[0])));
    return key;
}

// knack's automatic table: the scalar fields of each row but id, type and etag.
std::vector<std::pair<std::string, std::vector<std::string>>> auto_table(const ordered_json& rows) {
    std::vector<std::string> headers;
    std::vector<std::vector<std::pair<std::string, std::string>>> cells;
    for (const ordered_json& row : rows) {
        std::vector<std::pair<std::string, std::string>> line;
        if (row.is_object()) {
            for (const auto& [key, value] : row.items()) {
                if (key == "id" || key == "type" || key == "etag" || !scalar(value)) continue;
                line.emplace_back(capitalize(key), cell(value));
            }
        } else if (row.is_array()) {
            for (size_t i = 0; i < row.size(); ++i) line.emplace_back("Column" + std::to_string(i + 1), cell(row[i]));
        } else {
            line.emplace_back("Result", cell(row));
        }
        for (const auto& [header, _] : line) {
            if (std::find(headers.begin(), headers.end(), header) == headers.end()) headers.push_back(header);
        }
        cells.push_back(std::move(line));
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> columns;
    for (const std::string& header : headers) {
        std::vector<std::string> values;
        for (const auto& line : cells) {
            auto it = std::find_if(line.begin(), line.end(), [&](const auto& c) { return c.first == header; });
            values.push_back(it == line.end() ? "" : it->second);
        }
        columns.emplace_back(header, std::move(values));
    }
    return columns;
}

void tsv_value(const ordered_json& value, std::string& out) {
    if (value.is_array()) {
        out += std::to_string(value.size());
    } else if (!value.is_object()) {
        out += cell(value);
    }
}

}  // namespace

std::string id_segment(const std::string& id, const std::string& collection) {
    const std::string lower = text::lower(id);
    const std::string marker = text::lower("/" + collection + "/");
    size_t at = lower.find(marker);
    if (at == std::string::npos) return "";
    size_t start = at + marker.size();
    size_t end = id.find('/', start);
    return id.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

json workspace_cell(const json& row) {
    std::string ws = row.is_object() && row.contains("id") && row["id"].is_string()
                         ? id_segment(row["id"].get<std::string>(), "workspaces") : "";
    return ws.empty() ? json() : json(ws);
}

OutputFormat parse_output_format(const std::string& name) {
    if (name == "json" || name == "jsonc") return OutputFormat::json;
    if (name == "table") return OutputFormat::table;
    if (name == "tsv") return OutputFormat::tsv;
    if (name == "none") return OutputFormat::none;
    throw CliError("--output: '" + name + "' is not one of json, jsonc, table, tsv, none", kExitUsage);
}

json az_view(const json& resource) {
    if (!resource.is_object()) return resource;
    json out = json::object();
    if (resource.contains("properties") && resource["properties"].is_object()) {
        for (const auto& [key, value] : resource["properties"].items()) out[key] = value;
    }
    for (const auto& [key, value] : resource.items()) {
        if (key != "properties") out[key] = value;
    }
    add_resource_groups(out);
    return out;
}

json az_view_list(const json& resources) {
    json out = json::array();
    for (const json& r : resources) out.push_back(az_view(r));
    return out;
}

std::string render_table(const ordered_json& result, const std::vector<Column>& columns) {
    ordered_json rows = result.is_array() ? result : ordered_json::array({result});
    if (rows.empty()) return "";  // knack printed nothing for an empty list
    std::vector<std::pair<std::string, std::vector<std::string>>> table;
    if (columns.empty()) {
        table = auto_table(rows);
    } else {
        for (const Column& c : columns) {
            std::vector<std::string> values;
            for (const ordered_json& row : rows) {
                values.push_back(cell(c.compute ? ordered_json(c.compute(json(row))) : query_json(row, c.query)));
            }
            table.emplace_back(c.header, std::move(values));
        }
    }
    if (table.empty()) return "";
    std::vector<size_t> widths;
    for (const auto& [header, values] : table) {
        size_t w = header.size();
        for (const std::string& v : values) w = std::max(w, v.size());
        widths.push_back(w);
    }
    std::string out;
    auto line = [&](auto&& text_of) {
        std::string row;
        for (size_t c = 0; c < table.size(); ++c) {
            std::string t = text_of(c);
            if (c + 1 < table.size()) t.resize(widths[c], ' ');
            row += (c ? "  " : "") + t;
        }
        while (!row.empty() && row.back() == ' ') row.pop_back();
        out += row + "\n";
    };
    line([&](size_t c) { return table[c].first; });
    line([&](size_t c) { return std::string(widths[c], '-'); });
    for (size_t r = 0; r < rows.size(); ++r) line([&](size_t c) { return table[c].second[r]; });
    return out;
}

std::string render_tsv(const ordered_json& result) {
    ordered_json rows = result.is_array() ? result : ordered_json::array({result});
    std::string out;
    for (const ordered_json& row : rows) {
        if (row.is_null()) continue;
        if (row.is_object() || row.is_array()) {
            bool first = true;
            for (const ordered_json& value : row) {  // objects iterate in their own order
                if (!first) out += '\t';
                first = false;
                tsv_value(value, out);
            }
        } else if (row.is_boolean()) {
            out += row.get<bool>() ? "true" : "false";
        } else {
            out += cell(row);
        }
        out += '\n';
    }
    return out;
}

void print_result(const json& result, OutputFormat format, const std::string& query,
                  const std::vector<Column>& columns) {
    ordered_json shown = query.empty() ? ordered_json(result) : query_json(ordered_json(result), query);
    if (shown.is_null() || format == OutputFormat::none) return;
    std::string text;
    switch (format) {
        // knack's json sorts keys even under a query; table and tsv keep the query's order.
        case OutputFormat::json: text = json(shown).dump(2, ' ', false, json::error_handler_t::replace) + "\n"; break;
        case OutputFormat::table: text = render_table(shown, query.empty() ? columns : std::vector<Column>{}); break;
        case OutputFormat::tsv: text = render_tsv(shown); break;
        case OutputFormat::none: break;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace bai::cli
