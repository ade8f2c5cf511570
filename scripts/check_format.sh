#!/usr/bin/env bash
# Every tracked C, C++ and CUDA source is formatted as the repository's .clang-format says.
# Fails (listing the files and the first differences) when one is not; `clang-format -i FILE`
# formats a file in place. Needs clang-format (scripts/setup installs Debian's, version 14):
# another version may format a few constructs differently, so use the one setup installs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format not found (scripts/setup installs it)" >&2
  exit 1
fi

mapfile -d '' files < <(git ls-files -z -- '*.h' '*.hpp' '*.c' '*.cc' '*.cpp' '*.cu' '*.cuh')
# One clang-format run over them all; each difference is reported as "FILE:LINE:COL: error".
report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1) && status=0 || status=$?
mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u)
if ((status != 0 && ${#bad[@]} == 0)); then
  echo "$report" >&2
  echo "check_format: clang-format failed" >&2
  exit 1
fi

if ((${#bad[@]})); then
  head -n 12 <<<"$report" >&2  # the first differences, as clang-format reports them
  printf 'check_format: not formatted: %s\n' "${bad[@]}" >&2
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format" \
       "(format them with clang-format -i)" >&2
  exit 1
fi
echo "check_format: all ${#files[@]} files formatted"
