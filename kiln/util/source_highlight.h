#pragma once
// Error messages that point into text: the line and column, the offending
// line, and a caret under the spot (`~` under the rest of the range).
#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

struct LineColumn {
  size_t line;    // 1-based
  size_t column;  // 1-based
};

LineColumn lineColumnAt(std::string_view text, size_t offset);

// The line holding `start`, then a line with `^` under `start` and `~` under
// the rest of [start, end) that lies on that line.
std::string highlightSource(std::string_view text, size_t start, size_t end);

// "<what> at line L, column C: <message>\n<highlight>"
std::string sourceErrorMessage(std::string_view what, std::string_view text, size_t start, size_t end,
                               std::string_view message);

}  // namespace kiln
