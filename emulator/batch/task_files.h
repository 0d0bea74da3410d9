// A Batch task's files in and out: resourceFiles downloaded into its working directory before it
// runs (httpUrl, or every blob of storageContainerUrl, optionally under blobPrefix), and
// outputFiles uploaded after it, to the container SAS URL each names, when its uploadCondition
// (taskSuccess, taskFailure, taskCompletion) holds. A failure is the task's failureInfo. Only
// loopback hosts are reached (the emulator's own Blob endpoint, a server of the user's here), and
// the cloud's Blob host names (https://ACCOUNT.blob.core.windows.net/...), which stand for the
// emulator's own Blob endpoint.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace bai::batch {

// Where the cloud's Blob host names are served on this machine (the emulator's Blob endpoint,
// http://HOST:PORT): set by the daemon once it listens, for every Batch node of the process.
// `published` is the same endpoint as clients name it (--public-host), which the nodes reach at `url`.
void set_local_blob_endpoint(const std::string& url, const std::string& published = "");

// nullopt when every file is in place; else the failureInfo (category UserError).
std::optional<nlohmann::json> download_resource_files(const nlohmann::json& task, const std::filesystem::path& wd);

// `task_dir` holds stdout.txt, stderr.txt and wd/; patterns are relative to wd/ ("../stdout.txt",
// "model/*.json", "**/*.log"). nullopt when every upload due has been made.
std::optional<nlohmann::json> upload_output_files(const nlohmann::json& task, const std::filesystem::path& task_dir,
                                                  bool succeeded);

// PUTs `content` as the block blob `name` of the container at `container_url` (a SAS URL on a
// loopback host); why not, when it could not.
std::optional<std::string> upload_blob(const std::string& container_url, const std::string& name, const std::string& content);

}  // namespace bai::batch
