// Uploads to an Azure file share of the emulator's File endpoint (what `bai job submit` needs to
// put the training script where the job finds it), authorized with an account SAS signed here
// from the account key.
#pragma once

#include <httplib.h>

#include <filesystem>
#include <memory>
#include <string>

namespace bai::cli {

class ShareUploader {
public:
    ShareUploader(std::string file_endpoint, std::string account, std::string key);

    // Creates the share when it does not exist.
    void ensure_share(const std::string& share);
    // Creates each directory of `directory` ("a/b") that does not exist.
    void ensure_directories(const std::string& share, const std::string& directory);
    // Creates or replaces share/path with the local file's bytes.
    void upload(const std::string& share, const std::string& path, const std::filesystem::path& local);

private:
    // "/ACCOUNT/SHARE[/PATH]", encoded.
    std::string target(const std::string& share, const std::string& path = "") const;

    std::string sas_;
    std::string account_;
    std::unique_ptr<httplib::Client> client_;  // one connection for every request
};

}  // namespace bai::cli
