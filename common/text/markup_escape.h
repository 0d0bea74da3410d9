// Text put into XML or HTML: &, <, >, " and ' as character references (&apos; is HTML5's too).
#pragma once

#include <string>
#include <string_view>

namespace bai::text {

std::string markup_escape(std::string_view text);

}  // namespace bai::text
