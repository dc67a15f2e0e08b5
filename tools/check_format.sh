#!/usr/bin/env bash
# Checks that the C++ sources follow .clang-format: lists the files clang-format
# would change and fails if there are any (`make test-format`, part of
# `make test`). With --fix, reformats them in place instead (`make format`).
#
# The files: tracked *.cc and *.h under src tools tests fuzz bench. Not .def or
# .inc files (X-macro tables and included fragments), nothing under build/.
# CLANG_FORMAT overrides the binary; JOBS the number of parallel processes.
set -euo pipefail

cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-15}
jobs=${JOBS:-2}
fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "usage: $0 [--fix]" >&2; exit 2 ;;
esac

if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "error: $clang_format is not installed; install it with" \
       "'sudo apt-get install clang-format-15' (make test installs it)" >&2
  exit 2
fi

dirs=(src tools tests fuzz bench)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- "${dirs[@]}" | grep -E '\.(cc|h)$')
else
  mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.cc' -o -name '*.h' \) | sort)
fi
if [ "${#files[@]}" -eq 0 ]; then
  echo "error: no C++ files found under ${dirs[*]}" >&2
  exit 2
fi

if [ "$fix" = 1 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P "$jobs" "$clang_format" -i
  echo "formatted ${#files[@]} files with $clang_format"
  exit 0
fi

# One diagnostic per file that differs (--ferror-limit=1). Each batch of files
# writes to a log of its own, so parallel runs never interleave their lines.
# clang-format exits non-zero both for those diagnostics and for real failures
# (a bad .clang-format), so the two are told apart by what it prints.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0
printf '%s\0' "${files[@]}" \
  | LOGS=$logs xargs -0 -n 32 -P "$jobs" sh -c \
      '"$0" --dry-run --Werror --ferror-limit=1 "$@" 2>"$(mktemp -p "$LOGS")"' \
      "$clang_format" || status=$?
mapfile -t differ < <(cat "$logs"/* \
  | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ "${#differ[@]}" -gt 0 ]; then
  printf '%s\n' "${differ[@]}"
  echo "${#differ[@]} of ${#files[@]} C++ files do not follow .clang-format;" \
       "\`make format\` fixes them" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  cat "$logs"/* >&2
  echo "error: $clang_format failed (exit $status)" >&2
  exit 2
fi
echo "${#files[@]} C++ files follow .clang-format"
