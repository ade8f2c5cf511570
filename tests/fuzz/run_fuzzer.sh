#!/usr/bin/env bash
# Runs one libFuzzer binary for a fixed number of seconds over its seed corpus, copied into a
# scratch folder (so the fuzzer's new inputs never land in the tree):
#   fuzz_loader             the smallest generated archives and the hand-made corrupted ones
#   fuzz_program_json       tests/fuzz/corpus/program_json (small model.json files, issue 34's
#                           shapes) and the schema fixtures
#   fuzz_safetensors        tests/fuzz/corpus/safetensors and the smallest recorded case files
#   fuzz_engine_file        tests/fuzz/corpus/engine_file (engines compiled from small cases)
#   fuzz_plan_differential  tests/fuzz/corpus/plan_differential (the generator's choices)
# Usage: run_fuzzer.sh FUZZER SECONDS
set -euo pipefail
fuzzer=$1
seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
max_len=65536
# (Lists are read through process substitution: `head` closing the pipe early must not fail
# the script.)
case "$(basename "$fuzzer")" in
  fuzz_loader)
    mapfile -t seeds < <(find "$root/tests/cases" "$root/tests/fixtures" -name '*.pt2' -size -64k \
      2>/dev/null | sort | head -n 40) ;;
  fuzz_program_json)
    mapfile -t seeds < <(find "$root/tests/fuzz/corpus/program_json" "$root/tests/fixtures/schema" \
      -name '*.json' | sort) ;;
  fuzz_safetensors)
    mapfile -t seeds < <( (find "$root/tests/fuzz/corpus/safetensors" -type f;
      find "$root/tests/cases" -name '*.safetensors' -size -4k | sort | head -n 40) 2>/dev/null) ;;
  fuzz_engine_file)
    mapfile -t seeds < <(find "$root/tests/fuzz/corpus/engine_file" -type f | sort) ;;
  fuzz_plan_differential)
    mapfile -t seeds < <(find "$root/tests/fuzz/corpus/plan_differential" -type f | sort)
    max_len=512 ;;
  *)
    echo "run_fuzzer.sh: no seed corpus for $(basename "$fuzzer")" >&2
    exit 2 ;;
esac
for f in "${seeds[@]}"; do cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12)"; done
echo "$(basename "$fuzzer"): fuzzing for ${seconds}s from ${#seeds[@]} seeds"
"$fuzzer" "$corpus" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1
