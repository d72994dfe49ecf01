#pragma once
// JIT logging (PyTorch's GRAPH_DUMP/GRAPH_UPDATE/GRAPH_DEBUG), switched on per source file by the
// environment variable KILN_JIT_LOG_LEVEL:
//
//   KILN_JIT_LOG_LEVEL=dead_code_elimination            GRAPH_DUMP and GRAPH_UPDATE
//   KILN_JIT_LOG_LEVEL=">constant_propagation"          also GRAPH_DEBUG
//   KILN_JIT_LOG_LEVEL=dead_code_elimination:>cleanup   several files, `:` between them
//
// A file is named with or without `.cpp`; `>>` and `>>>` mean the same as `>`.
// Each logged line is prefixed with `[DUMP file.cpp:LINE] ` (UPDATE, DEBUG).
#include <ostream>
#include <sstream>
#include <string>

namespace kiln {

enum class JitLoggingLevel { GRAPH_DUMP = 0, GRAPH_UPDATE = 1, GRAPH_DEBUG = 2 };

// Whether `level` is on for the source file `file` (a path, as __FILE__ gives).
bool isJitLogEnabled(const char* file, JitLoggingLevel level);
// Replaces what KILN_JIT_LOG_LEVEL said (for tests and tools).
void setJitLogLevels(const std::string& spec);
// Where log lines go: std::cerr unless set.
void setJitLogStream(std::ostream* out);
// Writes `message` with every line prefixed.
void writeJitLog(JitLoggingLevel level, const char* file, int line, const std::string& message);

namespace detail {
template <typename... Args>
std::string jitLogText(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace kiln

#define KILN_JIT_LOG(level, ...)                                                               \
  do {                                                                                         \
    if (::kiln::isJitLogEnabled(__FILE__, level)) {                                            \
      ::kiln::writeJitLog(level, __FILE__, __LINE__, ::kiln::detail::jitLogText(__VA_ARGS__)); \
    }                                                                                          \
  } while (false)

// Whole graphs after a pass: GRAPH_DUMP("after dce", *graph).
#define GRAPH_DUMP(...) KILN_JIT_LOG(::kiln::JitLoggingLevel::GRAPH_DUMP, __VA_ARGS__)
// Each change a pass makes: GRAPH_UPDATE("removing ", *node).
#define GRAPH_UPDATE(...) KILN_JIT_LOG(::kiln::JitLoggingLevel::GRAPH_UPDATE, __VA_ARGS__)
// A pass's internal reasoning.
#define GRAPH_DEBUG(...) KILN_JIT_LOG(::kiln::JitLoggingLevel::GRAPH_DEBUG, __VA_ARGS__)
