// A Batch task's files in and out: resourceFiles downloaded into its working directory before it
// runs (httpUrl, or every blob of storageContainerUrl, optionally under blobPrefix), and
// outputFiles uploaded after it, to the container SAS URL each names, when its uploadCondition
// (taskSuccess, taskFailure, taskCompletion) holds. A failure is the task's failureInfo.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace bai::batch {

// nullopt when every file is in place; else the failureInfo (category UserError).
std::optional<nlohmann::json> download_resource_files(const nlohmann::json& task, const std::filesystem::path& wd);

// `task_dir` holds stdout.txt, stderr.txt and wd/; patterns are relative to wd/ ("../stdout.txt",
// "model/*.json", "**/*.log"). nullopt when every upload due has been made.
std::optional<nlohmann::json> upload_output_files(const nlohmann::json& task, const std::filesystem::path& task_dir,
                                                  bool succeeded);

}  // namespace bai::batch
