#pragma once

namespace bai::validation {

// The JSON text of spec/2018-05-01.json, spec/2017-09-01-preview.json and spec/2018-03-01.json.
extern const char* const kSpec2018_05_01;
extern const char* const kSpec2017_09_01_preview;
extern const char* const kSpec2018_03_01;

}  // namespace bai::validation
