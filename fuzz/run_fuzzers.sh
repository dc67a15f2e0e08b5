#!/usr/bin/env bash
# Runs every fuzzer of a fuzz build for a bounded time, a few at a time (each
# fuzzer is one process on one core), seeded with its regression inputs
# (fuzz/corpus/<reader>/) and the test data. New inputs a fuzzer finds stay
# in BUILD/corpus/<reader>; a crash leaves crash-* files there and fails the
# run, after every fuzzer's report is shown.
#
#   fuzz/run_fuzzers.sh BUILD SECONDS JOBS TEST_DATA HLO_DATA
set -euo pipefail
build=$1 seconds=$2 jobs=$3 test_data=$4 hlo_data=$5
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
root=$(pwd)

seeds_of() {
  case $1 in
    text_parser) echo "fuzz/corpus/text tests/data/text" ;;
    hlo) echo "fuzz/corpus/hlo $hlo_data" ;;
    sharding) echo "fuzz/corpus/sharding" ;;
    ffi_attributes) echo "fuzz/corpus/ffi_attributes" ;;
    vhlo) echo "fuzz/corpus/vhlo ../shared/corpus/vhlo $test_data $(dirname "$test_data")/stablehlo-bytecode" ;;
    *) echo "fuzz/corpus/$1 ../shared/corpus/vhlo $test_data" ;;
  esac
}

names=() pids=()
for fuzzer in "$build"/fuzz/*_fuzzer; do
  name=$(basename "$fuzzer" _fuzzer)
  existing=()
  for dir in $(seeds_of "$name"); do [ -d "$dir" ] && existing+=("$root/$dir"); done
  mkdir -p "$build/corpus/$name"
  echo "Fuzzing $name for $seconds s (seeds: ${existing[*]})"
  (cd "$build/corpus" && "../fuzz/$(basename "$fuzzer")" "$name" "${existing[@]}" \
     -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1) \
    > "$build/corpus/$name.log" 2>&1 &
  names+=("$name") pids+=($!)
  # At most `jobs` at once: wait for the oldest still running.
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
done

failed=()
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then failed+=("${names[$i]}"); fi
  echo "--- ${names[$i]} (last lines of $build/corpus/${names[$i]}.log)"
  tail -n 12 "$build/corpus/${names[$i]}.log"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: fuzzers failed: ${failed[*]} (crash inputs in $build/corpus)" >&2
  exit 1
fi
