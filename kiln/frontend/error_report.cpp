#include "kiln/frontend/error_report.h"

#include "kiln/util/error.h"

namespace kiln {

std::string formatSourceError(const SourceRange& range, const std::string& message) {
  if (!range.valid()) return message;
  const Source& source = *range.source();
  size_t line = source.lineForOffset(std::min(range.start(), source.text().size()));
  return message + ":\n  File \"" + source.filename().value_or("<string>") + "\", line " +
         std::to_string(line + source.startingLine()) + "\n" + range.underlinedLine();
}

void throwSourceError(const SourceRange& range, const std::string& message) {
  throw Error(formatSourceError(range, message));
}

}  // namespace kiln
