#include "emulator/batch/command_line.h"

namespace bai::batch {

std::optional<std::vector<std::string>> split_command_line(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else if (c == '\'') {
            size_t end = line.find('\'', i + 1);
            if (end == std::string_view::npos) return std::nullopt;
            word.append(line.substr(i + 1, end - i - 1));
            i = end;
            in_word = true;
        } else if (c == '"') {
            size_t j = i + 1;
            for (; j < line.size() && line[j] != '"'; ++j) {
                // In double quotes a backslash escapes only \ " $ ` and a newline.
                if (line[j] == '\\' && j + 1 < line.size() && std::string_view("\\\"$`\n").find(line[j + 1]) != std::string_view::npos) ++j;
                word += line[j];
            }
            if (j >= line.size()) return std::nullopt;
            i = j;
            in_word = true;
        } else if (c == '\\' && i + 1 < line.size()) {
            word += line[++i];
            in_word = true;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(word));
    if (words.empty()) return std::nullopt;
    return words;
}

}  // namespace bai::batch
