#include "emulator/engine/volume_links.h"

#include <stdexcept>

#include "common/log/logger.h"
#include "fake_storage/engine/storage_error.h"

namespace bai::engine {

namespace fs = std::filesystem;

void AttachedVolumes::release() {
    for (auto& mount : mounts) mount->unmount();
    mounts.clear();
}

void attach_volumes(const fs::path& root, const std::vector<arm::Volume>& volumes, storage::FileStore& files,
                    std::vector<std::string>& notes, AttachedVolumes& attached, bool links) {
    for (const arm::Volume& v : volumes) {
        fs::path at = root / v.relative;
        std::error_code ec;
        fs::create_directories(at.parent_path(), ec);
        if (v.blob) {
            fs::create_directories(at, ec);
            attached.directories.emplace_back(v.relative, at);
            notes.push_back("blob container " + v.account + "/" + v.container + " at " + at.string() +
                            ": a local directory (blob containers are not mounted yet)");
            continue;
        }
        try {
            files.get_share(v.account, v.container);
        } catch (const storage::StorageError&) {
            throw std::runtime_error("cannot mount the file share " + v.container + " of storage account " + v.account +
                                     " at " + v.relative + ": the share does not exist");
        }
        fs::remove(at, ec);
        fs::create_directory(at, ec);
        std::string why;
        try {
            mounts::ShareFsOptions options;
            options.faults = attached.faults();
            options.file_mode = v.file_mode;
            options.dir_mode = v.directory_mode;
            auto mount = std::make_unique<mounts::ShareFs>(files, v.account, v.container, options);
            mount->mount(at);
            attached.mounts.push_back(std::move(mount));
            attached.directories.emplace_back(v.relative, at);
            notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() + " (FUSE)");
            continue;
        } catch (const std::exception& e) {
            why = e.what();
        }
        const fs::path share_dir = files.share_root(v.account, v.container);
        if (links) {
            fs::remove(at, ec);
            fs::create_directory_symlink(share_dir, at, ec);
            if (ec) throw std::runtime_error("cannot mount " + v.account + "/" + v.container + " at " + at.string() + ": " + ec.message());
        }
        attached.directories.emplace_back(v.relative, share_dir);
        notes.push_back("file share " + v.account + "/" + v.container + " at " + at.string() + " (" +
                        (links ? "a link" : "bound") + " to its directory: " + why + ")");
    }
}

void adopt_share_writes(storage::FileStore& files, const std::vector<fs::path>& directories) {
    std::error_code ec;
    const fs::path store = fs::weakly_canonical(files.storage_root(), ec);
    for (const fs::path& dir : directories) {
        fs::path real = fs::weakly_canonical(dir, ec);
        if (ec) continue;
        fs::path rel = real.lexically_relative(store);
        auto it = rel.begin();
        if (rel.empty() || *it == "..") continue;
        // ACCOUNT/shares/SHARE/rest...
        std::vector<std::string> parts;
        for (; it != rel.end(); ++it) parts.push_back(it->string());
        if (parts.size() < 3 || parts[1] != "shares") continue;
        std::string inside;
        for (size_t i = 3; i < parts.size(); ++i) inside += (inside.empty() ? "" : "/") + parts[i];
        try {
            files.adopt_disk_changes(parts[0], parts[2], inside);
        } catch (const std::exception& e) {
            log::warning("could not index what was written in " + dir.string() + ": " + e.what());
        }
    }
}

}  // namespace bai::engine
