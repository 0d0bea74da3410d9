// The portal's page, script and style, compiled in from portal/static/ (portal_assets.cpp.in).
#pragma once

namespace bai::portal {

extern const char* const kIndexHtml;
extern const char* const kAppJs;
extern const char* const kAppCss;

}  // namespace bai::portal
