#include "emulator/engine/shell_words.h"

#include <cctype>

namespace bai::engine {
namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string lookup(const Environment& env, std::string_view name) {
    auto it = env.find(std::string(name));
    return it == env.end() ? std::string() : it->second;
}

}  // namespace

std::string expand_variables(std::string_view text, const Environment& env) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '$' || i + 1 >= text.size()) {
            out += text[i];
            continue;
        }
        if (text[i + 1] == '{') {
            size_t close = text.find('}', i + 2);
            std::string_view name = close == std::string_view::npos ? std::string_view() : text.substr(i + 2, close - i - 2);
            if (name.empty() || !name_start(name[0])) {
                out += text[i];
                continue;
            }
            out += lookup(env, name);
            i = close;
        } else if (name_start(text[i + 1])) {
            size_t end = i + 1;
            while (end < text.size() && name_char(text[end])) ++end;
            out += lookup(env, text.substr(i + 1, end - i - 1));
            i = end - 1;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace bai::engine
