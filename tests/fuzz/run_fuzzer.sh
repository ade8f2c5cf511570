#!/usr/bin/env bash
# Runs a libFuzzer binary for a fixed number of seconds over a seed corpus made of the
# committed test archives (copied, so the fuzzer's new inputs never land in the tree).
# Usage: run_fuzzer.sh FUZZER SECONDS
set -euo pipefail
fuzzer=$1
seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
# Seeds: the smallest generated archives and the hand-made corrupted ones.
# (Read through process substitution: `head` closing the pipe early must not fail the script.)
mapfile -t seeds < <(find "$root/tests/cases" "$root/tests/fixtures" -name '*.pt2' -size -64k \
  2>/dev/null | sort | head -n 40)
for f in "${seeds[@]}"; do cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12).pt2"; done
echo "fuzzing for ${seconds}s from ${#seeds[@]} seed archives"
"$fuzzer" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1
