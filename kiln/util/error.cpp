#include "kiln/util/error.h"

namespace kiln::detail {

void internalAssertFailed(const char* condition, const char* file, int line, const std::string& message) {
  throw Error(str("internal assert failed: ", condition, " at ", file, ":", line, message.empty() ? "" : ": ", message,
                  "\nThis is a bug in kiln; please report it."));
}

}  // namespace kiln::detail
