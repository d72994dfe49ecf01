#include "kiln/util/source_highlight.h"

#include <algorithm>

namespace kiln {

namespace {
size_t lineStart(std::string_view text, size_t offset) {
  size_t newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  return newline == std::string_view::npos ? 0 : newline + 1;
}
}  // namespace

LineColumn lineColumnAt(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line =
      1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
  size_t line_start = lineStart(text, offset);
  return {line, offset - line_start + 1};
}

std::string highlightSource(std::string_view text, size_t start, size_t end) {
  start = std::min(start, text.size());
  end = std::clamp(end, start, text.size());
  size_t line_start = lineStart(text, start);
  size_t line_end = text.find('\n', start);
  if (line_end == std::string_view::npos) line_end = text.size();
  std::string_view line = text.substr(line_start, line_end - line_start);
  std::string out(line);
  out += '\n';
  // Tabs stay tabs so the caret lines up in a terminal.
  for (size_t i = line_start; i < start; ++i) out += text[i] == '\t' ? '\t' : ' ';
  out += '^';
  for (size_t i = start + 1; i < std::min(end, line_end); ++i) out += '~';
  return out;
}

std::string sourceErrorMessage(std::string_view what, std::string_view text, size_t start, size_t end,
                               std::string_view message) {
  LineColumn lc = lineColumnAt(text, start);
  std::string out(what);
  out += " at line " + std::to_string(lc.line) + ", column " + std::to_string(lc.column) + ": ";
  out += message;
  out += '\n';
  out += highlightSource(text, start, end);
  return out;
}

}  // namespace kiln
