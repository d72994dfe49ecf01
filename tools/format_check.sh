#!/usr/bin/env bash
# Lists the C++ files that clang-format (with the committed .clang-format)
# would change, and fails if there are any. `make format` rewrites them.
# CLANG_FORMAT names the binary; the style is pinned to clang-format 14's
# output, so other versions may disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
command -v "$clang_format" >/dev/null || { echo "format-check: $clang_format not found (make deps installs it)" >&2; exit 1; }
# One clang-format process for all files: --dry-run reports every line that
# would change as `FILE:LINE:COL: error: ...`; keep the file names.
differ=$(git ls-files -z -- '*.cpp' '*.h' | xargs -0 "$clang_format" --style=file --dry-run 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: \(warning\|error\): code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$differ" ]; then
  echo "$differ"
  echo "format-check: $(echo "$differ" | wc -l) file(s) differ from clang-format's output; run \`make format\`" >&2
  exit 1
fi
