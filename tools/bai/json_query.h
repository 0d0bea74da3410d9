// --query: the part of JMESPath that az users write: a.b.c, "quoted-names", [N] and [-N],
// projections [*] and [] (which flattens nested lists first; the rest applies to each item,
// nulls dropped), filters
// [?field=='x'] with == != < <= > >=, multiselect {Name: name, State: executionState} and
// [name, id], and pipes (a[].b | [0]). Anything else is refused with the offset it fails at.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bai::cli {

// Throws CliError (exit status 2) for an expression it cannot parse. Objects of the result keep
// the order the expression gives their keys.
nlohmann::ordered_json query_json(const nlohmann::ordered_json& document, const std::string& expression);

}  // namespace bai::cli
