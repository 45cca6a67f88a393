#!/usr/bin/env bash
# Runs BenchmarkFilter1000Words against this checkout's safety package and
# an earlier commit's (default: the filter before issue #37's detector),
# alternating the two so both see the same machine load, and prints each
# run and the median of each side with their ratio (docs/safety.md,
# "Benchmarks"). Usage, from the module root:
#
#	bash safety/bench/compare.sh [base-commit] [runs]
set -euo pipefail
base=${1:-2387abe}
runs=${2:-5}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The earlier package, with the module files it built with, and this
# file's benchmark, which uses only the filter's exported API.
git -C "$root" archive "$base" go.mod go.sum safety | tar -x -C "$tmp"
cp "$root/safety/bench_words_test.go" "$tmp/safety/"
run() { # dir → µs per 1,000 words
	(cd "$1" && go test ./safety -run '^$' -bench 'Filter1000Words$' -benchtime 200x -count 1) |
		awk '/µs\/1000words/ { for (i = 1; i < NF; i++) if ($(i+1) == "µs/1000words") print $i }'
}
now=(); then=()
for i in $(seq "$runs"); do
	now+=("$(run "$root")")
	then+=("$(run "$tmp")")
	echo "run $i: this checkout ${now[-1]} µs/1000 words, $base ${then[-1]} µs/1000 words"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'; }
m1=$(median "${now[@]}"); m0=$(median "${then[@]}")
echo "median: this checkout $m1 µs, $base $m0 µs per 1,000 words; ratio $(awk -v a="$m1" -v b="$m0" 'BEGIN { printf "%.2f", a / b }')"
