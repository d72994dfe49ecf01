#pragma once
// Errors. `kiln::Error` is what user input (shapes, dtypes, source, IR text)
// raises; it becomes RuntimeError in Python. Internal invariants use
// KILN_INTERNAL_ASSERT, whose failure is a kiln bug, not a user mistake.
#include <sstream>
#include <stdexcept>
#include <string>

namespace kiln {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message) : std::runtime_error(std::move(message)) {}
};

// Thrown for out-of-range indices and dims; Python sees IndexError.
class IndexError : public Error {
 public:
  using Error::Error;
};

// Thrown for wrong argument types; Python sees TypeError.
class TypeError : public Error {
 public:
  using Error::Error;
};

namespace detail {

inline void appendAll(std::ostringstream&) {}
template <typename T, typename... Rest>
void appendAll(std::ostringstream& out, const T& first, const Rest&... rest) {
  out << first;
  appendAll(out, rest...);
}

// Concatenates the streamable arguments into one message.
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  appendAll(out, args...);
  return out.str();
}

[[noreturn]] void internalAssertFailed(const char* condition, const char* file, int line, const std::string& message);

}  // namespace detail
}  // namespace kiln

// Raises kiln::Error with the streamed message when `cond` is false.
#define KILN_CHECK(cond, ...)                                \
  do {                                                       \
    if (__builtin_expect(!(cond), 0)) {                      \
      throw ::kiln::Error(::kiln::detail::str(__VA_ARGS__)); \
    }                                                        \
  } while (0)

#define KILN_CHECK_INDEX(cond, ...)                               \
  do {                                                            \
    if (__builtin_expect(!(cond), 0)) {                           \
      throw ::kiln::IndexError(::kiln::detail::str(__VA_ARGS__)); \
    }                                                             \
  } while (0)

#define KILN_CHECK_TYPE(cond, ...)                               \
  do {                                                           \
    if (__builtin_expect(!(cond), 0)) {                          \
      throw ::kiln::TypeError(::kiln::detail::str(__VA_ARGS__)); \
    }                                                            \
  } while (0)

#define KILN_ERROR(...) throw ::kiln::Error(::kiln::detail::str(__VA_ARGS__))

// A broken internal invariant: a bug in kiln. Still an exception, so a
// long-running host process is not killed by one bad graph.
#define KILN_INTERNAL_ASSERT(cond, ...)                                                         \
  do {                                                                                          \
    if (__builtin_expect(!(cond), 0)) {                                                         \
      ::kiln::detail::internalAssertFailed(#cond, __FILE__, __LINE__,                           \
                                           ::kiln::detail::str("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                                           \
  } while (0)
