#include "common/endpoints/user_pointer.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/endpoints/endpoints_file.h"
#include "common/env/variables.h"

namespace bai::endpoints {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> runtime_pointer() {
    auto dir = env::variable("XDG_RUNTIME_DIR");
    if (!dir || !fs::is_directory(*dir)) return std::nullopt;
    return fs::path(*dir) / "batchai-emulator" / kFileName;
}

std::optional<fs::path> home_pointer() {
    auto home = env::variable("HOME");
    if (!home) return std::nullopt;
    return fs::path(*home) / ".batchai" / kFileName;
}

}  // namespace

std::optional<fs::path> pointer_path() {
    if (auto named = env::variable("BATCHAI_EMULATOR_POINTER")) {
        if (*named == "off") return std::nullopt;
        return fs::path(*named);
    }
    if (auto runtime = runtime_pointer()) return runtime;
    return home_pointer();
}

std::vector<fs::path> pointer_candidates() {
    if (auto named = env::variable("BATCHAI_EMULATOR_POINTER")) {
        if (*named == "off") return {};
        return {fs::path(*named)};
    }
    std::vector<fs::path> candidates;
    if (auto runtime = runtime_pointer()) candidates.push_back(*runtime);
    if (auto home = home_pointer()) candidates.push_back(*home);
    return candidates;
}

void publish_pointer(const fs::path& pointer, const fs::path& endpoints_file) {
    if (pointer.has_parent_path()) {
        // Private to the user, as the runtime directory is: the files named there hold keys.
        if (fs::create_directories(pointer.parent_path())) {
            fs::permissions(pointer.parent_path(), fs::perms::owner_all);
        }
    }
    fs::path partial = pointer;
    partial += "." + std::to_string(::getpid()) + ".partial";
    std::error_code ignored;
    fs::remove(partial, ignored);
    fs::create_symlink(endpoints_file, partial);
    fs::rename(partial, pointer);
}

void withdraw_pointer(const fs::path& pointer, const fs::path& endpoints_file) {
    std::error_code ec;
    if (fs::read_symlink(pointer, ec) == endpoints_file && !ec) fs::remove(pointer, ec);
}

bool process_alive(long pid) {
    if (pid <= 0) return true;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace bai::endpoints
