#!/bin/sh
# Runs every libFuzzer target of a fuzz build for a time budget each.
#   tests/fuzz/run-fuzzers.sh BUILD_DIR SECONDS_PER_TARGET
# Target fuzz-NAME starts from tests/fuzz/corpus/NAME (read only: inputs it
# finds go to a temp dir, so the committed corpus never changes). Fails if
# any target finds a crash; the reproducer is kept and its path printed.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 FUZZ_BUILD_DIR SECONDS_PER_TARGET" >&2
  exit 2
fi
build=$1
budget=$2
corpora=$(cd "$(dirname "$0")" && pwd)/corpus

targets=$(find "$build" -type f -name 'fuzz-*' -perm -u+x | sort)
if [ -z "$targets" ]; then
  echo "$0: no fuzz-* targets under $build (configure it with -Dfuzzing=true and build)" >&2
  exit 2
fi

failed=0
for target in $targets; do
  name=$(basename "$target" | sed 's/^fuzz-//')
  work=$(mktemp -d "/tmp/aasm-fuzz-$name.XXXXXX")
  mkdir "$work/new" "$work/artifacts"
  seeds=$corpora/$name
  [ -d "$seeds" ] || { echo "$0: no seed corpus $seeds" >&2; exit 2; }
  echo "== $name: ${budget}s from $seeds"
  if "$target" -max_total_time="$budget" -artifact_prefix="$work/artifacts/" \
      -print_final_stats=1 "$work/new" "$seeds" >"$work/log" 2>&1 \
      && [ -z "$(ls -A "$work/artifacts")" ]; then
    grep -E '^(stat::number_of_executed_units|Done)' "$work/log" || true
    rm -rf "$work"
  else
    echo "!! $name found a crash; log and reproducer kept in $work:" >&2
    ls "$work/artifacts" >&2
    tail -n 30 "$work/log" >&2
    failed=1
  fi
done
exit $failed
