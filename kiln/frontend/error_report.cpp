#include "kiln/frontend/error_report.h"

#include <algorithm>

#include "kiln/util/error.h"

namespace kiln {

std::string formatSourceError(const SourceRange& range, const std::string& message) {
  if (!range.valid()) return message;
  const Source& source = *range.source();
  const std::string& text = source.text();
  size_t start = std::min(range.start(), text.size());
  size_t end = std::clamp(range.end(), start, text.size());
  size_t line = source.lineForOffset(start);
  size_t line_start = source.offsetForLine(line);
  size_t line_end = text.find('\n', line_start);
  if (line_end == std::string::npos) line_end = text.size();
  std::string out = message + ":\n  File \"" + source.filename().value_or("<string>") + "\", line " +
                    std::to_string(line + source.startingLine()) + "\n";
  out.append(text, line_start, line_end - line_start);
  out += '\n';
  // Tabs stay tabs so the underline lines up in a terminal.
  for (size_t i = line_start; i < start; ++i) out += text[i] == '\t' ? '\t' : ' ';
  size_t width = std::max<size_t>(1, std::min(end, line_end) - std::min(start, line_end));
  out.append(width, '~');
  out += " <--- HERE";
  return out;
}

void throwSourceError(const SourceRange& range, const std::string& message) {
  throw Error(formatSourceError(range, message));
}

}  // namespace kiln
