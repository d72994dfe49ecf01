#include "kiln/ir/source_range.h"

#include <algorithm>

#include "kiln/util/source_highlight.h"

namespace kiln {

Source::Source(std::string text, std::optional<std::string> filename, size_t starting_line)
    : text_(std::move(text)), filename_(std::move(filename)), starting_line_(starting_line) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

size_t Source::lineForOffset(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<size_t>(it - line_starts_.begin()) - 1;
}

std::optional<std::tuple<std::string, size_t, size_t>> SourceRange::fileLineCol() const {
  if (!source_ || !source_->filename()) return std::nullopt;
  size_t line = source_->lineForOffset(start_);
  return std::make_tuple(*source_->filename(), line + source_->startingLine(), start_ - source_->offsetForLine(line));
}

std::string SourceRange::highlight() const {
  if (!source_) return "";
  return highlightSource(source_->text(), start_, end_);
}

std::string SourceRange::underlinedLine() const {
  if (!source_) return "";
  const std::string& text = source_->text();
  size_t start = std::min(start_, text.size());
  size_t end = std::clamp(end_, start, text.size());
  size_t line_start = source_->offsetForLine(source_->lineForOffset(start));
  size_t line_end = text.find('\n', line_start);
  if (line_end == std::string::npos) line_end = text.size();
  std::string out(text, line_start, line_end - line_start);
  out += '\n';
  // Tabs stay tabs so the underline lines up in a terminal.
  for (size_t i = line_start; i < start; ++i) out += text[i] == '\t' ? '\t' : ' ';
  out.append(std::max<size_t>(1, std::min(end, line_end) - start), '~');
  out += " <--- HERE";
  return out;
}

std::string SourceRange::errorMessage(const std::string& message) const {
  if (!source_) return message;
  size_t offset = std::min(start_, source_->text().size());
  size_t line = source_->lineForOffset(offset);
  std::string where = source_->filename() ? *source_->filename() + ", line " : "line ";
  where += std::to_string(line + source_->startingLine()) + ", column " +
           std::to_string(offset - source_->offsetForLine(line) + 1);
  return where + ": " + message + "\n" + highlight();
}

}  // namespace kiln
