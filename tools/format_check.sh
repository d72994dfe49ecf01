#!/usr/bin/env bash
# Lists the C++ files that clang-format (with the committed .clang-format)
# would change, and fails if there are any. `make format` rewrites them.
# CLANG_FORMAT names the binary; the style is pinned to clang-format 14's
# output, so other versions may disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
differ=0
while IFS= read -r -d '' f; do
  if ! "$clang_format" --style=file "$f" | cmp -s - "$f"; then
    echo "$f"
    differ=$((differ + 1))
  fi
done < <(git ls-files -z -- '*.cpp' '*.h')
if [ "$differ" -gt 0 ]; then
  echo "format-check: $differ file(s) differ from clang-format's output; run \`make format\`" >&2
  exit 1
fi
