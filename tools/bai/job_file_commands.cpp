// bai job file list / job file stream (2018 spelling) and job list-files / job stream-file
// (the preview CLI's): a job's output files through listOutputFiles and their download URLs.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tools/bai/command_flags.h"
#include "tools/bai/http_client.h"
#include "tools/bai/job_commands.h"
#include "tools/bai/json_fields.h"

namespace bai::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json file_type_cell(const json& row) {
    if (row.contains("fileType")) return row["fileType"];
    return row.contains("isDirectory") && row["isDirectory"] == true ? "directory" : "file";
}
// az left the size of a directory empty.
json size_cell(const json& row) {
    if (file_type_cell(row) == "directory" || !row.contains("contentLength")) return nullptr;
    return row["contentLength"];
}

const std::vector<Column> kFileTable = {{"Name", "name"},
                                        {"Type", "", file_type_cell},
                                        {"Size", "", size_cell},
                                        {"Modified", "lastModified"}};

struct FileFlags : JobFlags {
    std::string directory_id = "stdouterr";
    std::string path = ".";
    std::string file_name;
    int expiry_minutes = 60;
};

json list_files(CommandContext& ctx, const JobScope& scope, const std::string& job, const std::string& directory_id,
                const std::string& path, int expiry_minutes = 60) {
    Query query = {{"outputdirectoryid", directory_id}, {"linkexpiryinminutes", std::to_string(expiry_minutes)}};
    if (!scope.preview() || path != ".") query.emplace_back("directory", path);
    return az_view_list(ctx.arm().list(scope.path(ctx.arm(), job) + "/listOutputFiles", scope.api(), query, "POST"));
}
json list_files(CommandContext& ctx, const JobScope& scope, const FileFlags& f) {
    return list_files(ctx, scope, f.name, f.directory_id, f.path, f.expiry_minutes);
}

httplib::Result download(CommandContext& ctx, const std::string& url, size_t offset) {
    try {
        httplib::Result r = get_url(url, {{"Range", "bytes=" + std::to_string(offset) + "-"}},
                                    ctx.arm().endpoints().ca_cert, 30s);
        if (!r) throw CliError("cannot download the file: " + httplib::to_string(r.error()));
        return r;
    } catch (const std::invalid_argument& e) {
        throw CliError(std::string("cannot download the file: ") + e.what());
    }
}

// Prints what the file holds past `offset`; returns the new offset.
size_t print_from(CommandContext& ctx, const std::string& url, size_t offset) {
    httplib::Result r = download(ctx, url, offset);
    if (r->status / 100 == 2) {
        std::fwrite(r->body.data(), 1, r->body.size(), stdout);
        std::fflush(stdout);
        return offset + r->body.size();
    }
    return offset;  // 416: nothing new yet
}


void add_list_flags(CLI::App* c, FileFlags& f, const std::string& job_flags) {
    add_job_flags(c, f, job_flags);
    c->add_option("-d,--output-directory-id", f.directory_id, "Id of the output directory (default stdouterr)");
    c->add_option("-p,--path", f.path, "Directory inside the output directory (default .)");
    c->add_option("--expiry", f.expiry_minutes, "Minutes the download URLs stay valid (default 60)")
        ->check(CLI::Range(5, 600));
}

}  // namespace

// az's tail_file: waits for the file to appear, then prints it as it grows until the job ends.
void stream_output_file(CommandContext& ctx, const JobScope& scope, const std::string& job,
                        const std::string& directory_id, const std::vector<std::string>& names,
                        const std::string& path) {
    const std::string& file_name = names.front();
    auto find_url = [&] {
        json files = list_files(ctx, scope, job, directory_id, path);
        for (const std::string& wanted : names) {
            for (const json& file : files) {
                if (string_field(file, "name") == wanted) return string_field(file, "downloadUrl");
            }
        }
        return std::string();
    };
    std::string url;
    bool reported_absence = false;
    while ((url = find_url()).empty()) {
        // Unlike az, look once more after seeing the job finished: it may have written the file
        // between the listing and the job's state.
        if (job_finished(ctx.arm().get(scope.path(ctx.arm(), job), scope.api())) && (url = find_url()).empty()) {
            std::fprintf(stderr, "WARNING: The file \"%s\" not found for the completed job.\n", file_name.c_str());
            return;
        }
        if (!url.empty()) break;
        if (!reported_absence) {
            std::fprintf(stderr, "WARNING: The file \"%s\" not found. Waiting for the job to generate it.\n",
                         file_name.c_str());
            reported_absence = true;
        }
        std::this_thread::sleep_for(500ms);
    }
    size_t offset = 0;
    while (true) {
        offset = print_from(ctx, url, offset);
        if (job_finished(ctx.arm().get(scope.path(ctx.arm(), job), scope.api()))) {
            print_from(ctx, url, offset);
            return;
        }
        std::this_thread::sleep_for(500ms);
    }
}

size_t download_output_directory(CommandContext& ctx, const JobScope& scope, const std::string& job,
                                 const std::string& directory_id, const std::string& local) {
    size_t count = 0;
    std::vector<std::string> pending = {"."};
    while (!pending.empty()) {
        std::string directory = pending.back();
        pending.pop_back();
        for (const json& file : list_files(ctx, scope, job, directory_id, directory)) {
            std::string name = string_field(file, "name");
            // A listed name is one path component: never a way out of the local directory.
            if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos) {
                throw CliError("the service listed an entry named '" + name + "' in " + directory +
                               ", which is not a plain file name; nothing was written for it");
            }
            std::string relative = directory == "." ? name : directory + "/" + name;
            if (string_field(file, "fileType") == "directory" ||
                (file.contains("isDirectory") && file["isDirectory"].is_boolean() && file["isDirectory"].get<bool>())) {
                pending.push_back(relative);
                continue;
            }
            httplib::Result r = download(ctx, string_field(file, "downloadUrl"), 0);
            if (r->status / 100 != 2 && r->status != 416) {
                throw CliError("cannot download " + relative + ": HTTP " + std::to_string(r->status));
            }
            std::filesystem::path target = std::filesystem::path(local) / relative;
            std::filesystem::create_directories(target.parent_path());
            std::ofstream out(target, std::ios::binary | std::ios::trunc);
            if (r->status / 100 == 2) out.write(r->body.data(), static_cast<std::streamsize>(r->body.size()));
            if (!out) throw CliError("cannot write " + target.string());
            ++count;
        }
    }
    return count;
}

void add_job_file_commands(CLI::App* job, CommandContext& ctx) {
    CLI::App* file = job->add_subcommand("file", "The output files of a job.");
    file->require_subcommand(1);

    auto l = std::make_shared<FileFlags>();
    CLI::App* c = file->add_subcommand("list", "List a job's output files and their download URLs.");
    add_list_flags(c, *l, "-j,--job,--job-name");
    auto list = [&ctx, l] { ctx.print(list_files(ctx, l->scope(ctx), *l), kFileTable); };
    c->callback(list);
    c = job->add_subcommand("list-files", "List a job's output files (the preview CLI's spelling).");
    add_list_flags(c, *l, "-n,--name,-j,--job-name");
    c->callback(list);

    auto s = std::make_shared<FileFlags>();
    c = file->add_subcommand("stream", "Print an output file and follow it until the job ends.");
    add_list_flags(c, *s, "-j,--job,--job-name");
    c->add_option("-f,--file-name", s->file_name, "Name of the file, e.g. stdout.txt")->required();
    auto stream = [&ctx, s] {
        stream_output_file(ctx, s->scope(ctx), s->name, s->directory_id, {s->file_name}, s->path);
    };
    c->callback(stream);
    c = job->add_subcommand("stream-file", "Print an output file and follow it (the preview CLI's spelling).");
    add_list_flags(c, *s, "-j,--job-name");
    c->add_option("-n,--name,-f,--file-name", s->file_name, "Name of the file, e.g. stdout.txt")->required();
    c->callback(stream);
}

}  // namespace bai::cli
