#pragma once
// Errors in script source, in TorchScript's layout: the message, the file and
// line, the offending line and `~~~~ <--- HERE` under the range.
#include <string>

#include "kiln/ir/source_range.h"

namespace kiln {

// Sources without a file name are called "<string>", as Python names code
// compiled from a string.
std::string formatSourceError(const SourceRange& range, const std::string& message);

[[noreturn]] void throwSourceError(const SourceRange& range, const std::string& message);

}  // namespace kiln
