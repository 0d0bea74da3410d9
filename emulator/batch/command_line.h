// A Batch task's commandLine, which the service runs without a shell: split into words as a
// POSIX shell would split them (single and double quotes, backslash escapes), with no variable
// expansion, globbing or redirection ("/bin/bash -c 'echo $HOME'" is how a task gets those).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bai::batch {

// nullopt when a quote is not closed or the line has no word.
std::optional<std::vector<std::string>> split_command_line(std::string_view line);

}  // namespace bai::batch
