#!/usr/bin/env bash
# The tracked tree stays small: every run on the GPU host ships the whole working tree, which
# must stay well under 64 MiB. Fails when the tracked files (git ls-files, sizes summed as
# checked out) exceed SPLICE_TREE_LIMIT_MIB (default 41) and lists the largest folders.
# The binding limit is scripts/gpu_test's: tree plus GPU bundle under 60 MiB as the device tool
# counts them (58 MiB with 40.1 MiB tracked, at 3f2c2fa).
# Generated data (benchmark workloads, test scratch) belongs in ignored folders instead.
set -euo pipefail
cd "$(dirname "$0")/.."

limit_mib=${SPLICE_TREE_LIMIT_MIB:-41}
limit=$((limit_mib * 1024 * 1024))
# Sizes of the files as they are in the working tree; a tracked file deleted there counts 0.
sizes() { git ls-files -z | xargs -0 stat -c "$1" -- 2>/dev/null || true; }
total=$(sizes %s | awk '{s += $1} END {print s + 0}')
mib=$(awk -v t="$total" 'BEGIN {printf "%.1f", t / 1048576}')

if ((total > limit)); then
  echo "check_tree_size: tracked files total ${mib} MiB, over the ${limit_mib} MiB limit;" \
       "largest folders (MiB):" >&2
  sizes '%s %n' |
    awk '{f = substr($0, length($1) + 2); n = split(f, p, "/"); d = p[1] (n > 2 ? "/" p[2] : ""); s[d] += $1}
         END {for (d in s) printf "%8.1f %s\n", s[d] / 1048576, d}' | sort -rn | head -n 10 >&2
  exit 1
fi
echo "check_tree_size: tracked files total ${mib} MiB (limit ${limit_mib} MiB)"
