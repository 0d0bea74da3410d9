#pragma once

namespace bai::validation {

// The JSON text of spec/2018-05-01.json and spec/2017-09-01-preview.json.
extern const char* const kSpec2018_05_01;
extern const char* const kSpec2017_09_01_preview;

}  // namespace bai::validation
