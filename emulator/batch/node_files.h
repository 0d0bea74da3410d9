// A node's or a task's directory as the Batch file APIs show it: a file's content (GET; a part
// with ocp-range bytes=START-END, If-Modified-Since and If-Unmodified-Since as the service takes
// them), its
// properties (HEAD: ocp-batch-file-isdirectory, ocp-batch-file-url, ocp-batch-file-mode,
// Content-Length, Last-Modified; no creation time, as the service shows none for the files of
// Linux nodes), its removal (DELETE, `recursive` for a directory), and the list of what is in it
// (`recursive`, `$filter` startswith(name,'...') or name eq '...'). A path may not climb out of
// its root; what is not there is 404 FileNotFound.
#pragma once

#include <httplib.h>

#include <filesystem>
#include <string>

namespace bai::batch {

// `url`: the file's own, for ocp-batch-file-url.
void send_file_under(const httplib::Request& req, httplib::Response& res, const std::filesystem::path& root,
                     const std::string& relative, const std::string& url);
void delete_file_under(const httplib::Request& req, const std::filesystem::path& root, const std::string& relative);
// `files_url`: ".../files", under which each entry's url is; `metadata`: the odata.metadata.
void send_file_list(const httplib::Request& req, httplib::Response& res, const std::filesystem::path& root,
                    const std::string& files_url, const std::string& metadata);

}  // namespace bai::batch
