#!/usr/bin/env bash
# Every file splice writes goes through one writer, src/support/file_writer.{h,cc} (temporary
# created exclusively, fsync, rename; non-regular destinations refused; permissions kept; see
# docs/files.md). This check fails when any other tracked source of the product -- src/,
# tools/ and include/ -- creates, opens for writing or renames a file: ofstream/fstream,
# fopen/freopen/fdopen in a writing mode, O_CREAT, O_WRONLY, O_RDWR, O_TMPFILE, creat(),
# mkstemp/mkostemp, rename/renameat, std::filesystem::copy_file. Comments are not searched.
# Tests, benchmarks and examples may write their own scratch files and are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

writer='^src/support/file_writer\.(h|cc)$'
pattern='ofstream|[^i]fstream|\b(fopen|freopen|fdopen)[[:space:]]*\([^;]*"[^"]*[wa+][^"]*"'
pattern+='|\bO_(CREAT|WRONLY|RDWR|TMPFILE)\b|\bcreat[[:space:]]*\(|\bmko?stemps?[[:space:]]*\('
pattern+='|\brename(at2?)?[[:space:]]*\(|copy_file[[:space:]]*\('

found=0
while IFS= read -r file; do
  [[ "$file" =~ $writer ]] && continue
  # Line comments removed (block comments are not used in these sources), then searched.
  if hits=$(sed -e 's://.*$::' "$file" | grep -nE "$pattern"); then
    while IFS= read -r hit; do
      echo "$file:$hit"
    done <<<"$hits"
    found=1
  fi
done < <(git ls-files -- src tools include | grep -E '\.(h|hpp|cc|cpp|c)$')

if [ "$found" -ne 0 ]; then
  echo "check_writers: the lines above write files outside src/support/file_writer.{h,cc};" \
       "write through PendingFile / write_file there instead (docs/files.md)" >&2
  exit 1
fi
echo "check_writers: every file splice writes goes through src/support/file_writer"
