// The daemon's log (DIR/emulator.log): timestamped lines, also echoed to stderr from `warning` up.
#pragma once

#include <filesystem>
#include <string_view>

namespace bai::log {

enum class Level { debug, info, warning, error };

// Until opened, messages go to stderr only.
void open(const std::filesystem::path& path);
void close();
void write(Level level, std::string_view message);
// For what the caller already told the user on its own terms: the log file only.
void write_to_file(Level level, std::string_view message);

inline void info(std::string_view m) { write(Level::info, m); }
inline void warning(std::string_view m) { write(Level::warning, m); }
inline void error(std::string_view m) { write(Level::error, m); }

}  // namespace bai::log
