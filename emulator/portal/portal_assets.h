// The portal's page, scripts and style, compiled in from portal/static/ (portal_assets.cpp.in,
// filled by CMake): each served at /portal/NAME, the page (index.html) at /portal/.
#pragma once

#include <cstddef>

namespace bai::portal {

struct PortalAsset {
    const char* name;  // app.js
    const char* type;  // its Content-Type
    const char* body;
};

extern const PortalAsset kPortalAssets[];
extern const size_t kPortalAssetCount;

}  // namespace bai::portal
