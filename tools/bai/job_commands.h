// What the job subcommands share (job_commands.cpp, job_file_commands.cpp, job_submit_command.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/bai/job_scope.h"

namespace bai::cli {

struct JobFlags {
    std::string group, workspace, experiment, name;
    bool yes = false, no_wait = false;
    JobScope scope(CommandContext& ctx) const { return JobScope::resolve(ctx, group, workspace, experiment); }
};

// -g -w -e, and the job's name under `name_flags` (required) unless empty.
void add_job_flags(CLI::App* c, JobFlags& f, const std::string& name_flags);

// Polls until the job succeeds or fails, with a progress line (and, while it is queued, its
// cluster's nodes); returns the job.
// With until_started: returns once the job has left the queue.
nlohmann::json wait_for_job(CommandContext& ctx, const JobScope& scope, const std::string& name,
                            double interval_seconds, bool until_started = false);

// az's `job file stream`: waits for the file, prints it as it grows until the job ends. With
// several names, the first of them that the directory has (stdout.txt, else rank 0's).
void stream_output_file(CommandContext& ctx, const JobScope& scope, const std::string& job,
                        const std::string& directory_id, const std::vector<std::string>& names,
                        const std::string& path = ".");
// Downloads every file of an output directory (recursively) into `local`; returns how many.
size_t download_output_directory(CommandContext& ctx, const JobScope& scope, const std::string& job,
                                 const std::string& directory_id, const std::string& local);

void add_job_file_commands(CLI::App* job, CommandContext& ctx);

// A job's exit code as a process exit status: 0 for success, else 1..255 (a code outside that
// range, or none for a failed job, is 1).
int exit_status_of(const nlohmann::json& job);
void add_job_validate_command(CLI::App* job, CommandContext& ctx);
void add_job_submit_command(CLI::App* job, CommandContext& ctx);

}  // namespace bai::cli
