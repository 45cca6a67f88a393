#!/usr/bin/env bash
# Runs every benchmark command the README and docs/*.md cite, once each at
# the smallest -benchtime (1x) and -count 1, so a documented figure can
# always be reproduced: a benchmark that panics, fails or no longer exists
# fails `make test`. The commands are read from the documents themselves,
# so a newly documented one is covered without editing this file.
# --list prints the commands it would run.
#
# A cited command is a `go test … -bench …` line in a fenced block or in
# backticks. -count is dropped, -benchtime set to 1x and -short added (the
# benchmarks with a fixed large setup, a million records or a 30 s wait,
# shrink it under -short); the rest is run as written. Commands that come
# out the same run once, and so does one whose benchmarks another runs
# already (-bench . of its package, or a parent of its sub-benchmark).
set -euo pipefail
cd "$(dirname "$0")/.."

docs=(README.md docs/*.md)

cited() {
  {
    grep -ohE '`go test [^`]*-bench [^`]*`' "${docs[@]}" | tr -d '`'
    grep -ohE '^go test .*-bench .*$' "${docs[@]}"
  } | sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//'
}

smoke() {
  sed -E 's/ -count [0-9]+//; s/ -benchtime [^ ]+//; s/ -short//; s/$/ -short -benchtime 1x/'
}

# pattern is a command's -bench argument, unquoted; rest is the command
# with that argument blanked, which names the package and the flags.
pattern() { sed -E "s/.* -bench ('[^']*'|[^ ]+).*/\1/; s/'//g" <<<"$1"; }
rest() { sed -E "s/ -bench ('[^']*'|[^ ]+)/ -bench @/" <<<"$1"; }

# covered: another command runs every benchmark this one does.
covered() {
  local b=$1 pb rb a pa
  pb=$(pattern "$b") rb=$(rest "$b")
  for a in "${all[@]}"; do
    [ "$a" != "$b" ] && [ "$(rest "$a")" = "$rb" ] || continue
    pa=$(pattern "$a")
    if [ "$pa" = "." ] || [[ "$pb" == "$pa"/* ]]; then return 0; fi
  done
  return 1
}

mapfile -t all < <(cited | smoke | sort -u)

# Commands on the same package with the same flags run as one go test with
# their -bench patterns joined by |, which selects the same benchmarks and
# builds and starts the test binary once. A pattern naming a sub-benchmark
# (with /) cannot be joined that way and runs on its own.
declare -A joined=()
order=()
cmds=()
for c in "${all[@]}"; do
  covered "$c" && continue
  p=$(pattern "$c") r=$(rest "$c")
  if [[ "$p" == */* ]]; then
    cmds+=("$c")
    continue
  fi
  [ -n "${joined[$r]:-}" ] || order+=("$r")
  joined[$r]="${joined[$r]:+${joined[$r]}|}$p"
done
for r in "${order[@]}"; do
  q="'${joined[$r]}'"
  cmds+=("${r/ -bench @/ -bench $q}")
done
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${cmds[@]}"
  exit 0
fi
if [ "${#cmds[@]}" -eq 0 ]; then
  echo "bench-smoke: no benchmark commands found in ${docs[*]}" >&2
  exit 1
fi

status=0
total_start=$SECONDS
for cmd in "${cmds[@]}"; do
  # The documents are the project's own, but a command runs through eval:
  # refuse anything beyond a plain go test invocation.
  if [[ "$cmd" == *'$('* || "$cmd" =~ [\;\&\<\>\`] ]]; then
    echo "bench-smoke: refusing to run \"$cmd\"" >&2
    status=1
    continue
  fi
  echo "== $cmd"
  start=$SECONDS
  out=$(eval "$cmd" 2>&1) || { echo "$out"; echo "bench-smoke: FAILED: $cmd" >&2; status=1; continue; }
  if ! grep -qE '^Benchmark' <<<"$out"; then
    echo "$out"
    echo "bench-smoke: no benchmark ran: $cmd" >&2
    status=1
    continue
  fi
  grep -E '^(Benchmark|ok|PASS)' <<<"$out" | sed 's/^/   /'
  echo "   ($((SECONDS - start)) s)"
done

# voxgate bench (docs/capacity.md) is not a go test benchmark: it runs the
# gateway as a child process against a mock. One short run of every mode
# checks that it still runs and that no request through the gateway fails
# (it exits non-zero if one does); its figures here mean nothing.
echo "== voxgate bench, every mode, 2 clients, 1 s"
start=$SECONDS
go build -o "${TMPDIR:-/tmp}/voxgate-bench-smoke" ./cmd/voxgate
if out=$("${TMPDIR:-/tmp}/voxgate-bench-smoke" bench --mode whole,stream,chat,voice --clients 2 --duration 1s --warmup 300ms 2>&1); then
  grep -E '^(round|  requests/s|capacity)' <<<"$out" | sed 's/^/   /'
else
  echo "$out"
  echo "bench-smoke: FAILED: voxgate bench" >&2
  status=1
fi
rm -f "${TMPDIR:-/tmp}/voxgate-bench-smoke"
echo "   ($((SECONDS - start)) s)"
echo "bench-smoke: ${#cmds[@]} commands and voxgate bench in $((SECONDS - total_start)) s"
exit $status
