// The user-level pointer to a running emulator: a symbolic link to its DIR/endpoints.json that
// the daemon makes at start, so that bai finds the emulator from any directory.
//
// It lives in $XDG_RUNTIME_DIR/batchai-emulator/endpoints.json, or ~/.batchai/endpoints.json
// where there is no runtime directory. $BATCHAI_EMULATOR_POINTER names another file instead, or
// "off" for none (the tests' emulators, which must not replace the user's).
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

namespace bai::endpoints {

// Where the daemon makes its pointer; nullopt when pointers are off or no directory is known.
std::optional<std::filesystem::path> pointer_path();
// Where readers look, in order: the runtime directory's, then the home's (an emulator started
// from another kind of session, one without $XDG_RUNTIME_DIR, wrote the second).
std::vector<std::filesystem::path> pointer_candidates();

// Points `pointer` at `endpoints_file` (an absolute path), replacing any older pointer atomically.
// Throws std::filesystem::filesystem_error when the directory or the link cannot be made.
void publish_pointer(const std::filesystem::path& pointer, const std::filesystem::path& endpoints_file);
// Removes `pointer` if it still points at `endpoints_file`: a later emulator's pointer stays.
void withdraw_pointer(const std::filesystem::path& pointer, const std::filesystem::path& endpoints_file);

// Whether a process with this PID exists (one of another user counts). pid <= 0: unknown, true.
bool process_alive(long pid);

}  // namespace bai::endpoints
