// Shell text: quoting a word for /bin/sh, and expanding $NAME / ${NAME} references the way a
// node's shell expands them in the paths of a job.json.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/text/shell_quote.h"

namespace bai::engine {

using Environment = std::map<std::string, std::string>;

// 'text' with embedded quotes escaped: one word for /bin/sh whatever it contains.
using text::shell_quote;

// $NAME and ${NAME} replaced by their value in `env`; unset names expand to nothing, as in sh.
// "$" not followed by a name stays as it is.
std::string expand_variables(std::string_view text, const Environment& env);

}  // namespace bai::engine
