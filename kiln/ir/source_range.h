#pragma once
// Where a node came from: a range of a Source (the text of a script, or of an
// IR file). Printing a graph can show it as `# file.py:3:4`; errors show the
// line with a caret.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace kiln {

// Program text always has a file name ("<string>" for text given as a
// string), IR text has none; the interpreter shows TorchScript tracebacks
// only for the former.
class Source {
 public:
  // `starting_line` is the file line of the text's first line (1-based), for
  // text cut out of a larger file.
  explicit Source(std::string text, std::optional<std::string> filename = std::nullopt, size_t starting_line = 1);
  const std::string& text() const { return text_; }
  const std::optional<std::string>& filename() const { return filename_; }
  size_t startingLine() const { return starting_line_; }
  // 0-based line of the text holding `offset`.
  size_t lineForOffset(size_t offset) const;
  size_t offsetForLine(size_t line) const { return line_starts_.at(line); }

 private:
  std::string text_;
  std::optional<std::string> filename_;
  size_t starting_line_;
  std::vector<size_t> line_starts_;
};

class SourceRange {
 public:
  SourceRange() = default;
  SourceRange(std::shared_ptr<const Source> source, size_t start, size_t end)
      : source_(std::move(source)), start_(start), end_(end) {}

  const std::shared_ptr<const Source>& source() const { return source_; }
  size_t start() const { return start_; }
  size_t end() const { return end_; }
  bool valid() const { return source_ != nullptr; }
  // The source text the range covers.
  std::string text() const { return source_ ? source_->text().substr(start_, end_ - start_) : std::string(); }
  // (file name, 1-based line, 0-based column), as PyTorch prints source
  // locations; nullopt when the source has no file name.
  std::optional<std::tuple<std::string, size_t, size_t>> fileLineCol() const;
  // The line holding the range with `^~~~` under it.
  std::string highlight() const;
  // TorchScript's layout for program errors: the line holding the range,
  // then `~~~~ <--- HERE` under the range.
  std::string underlinedLine() const;
  // "line L, column C: <message>\n<highlight>" (with the file name when known).
  std::string errorMessage(const std::string& message) const;

 private:
  std::shared_ptr<const Source> source_;
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace kiln
