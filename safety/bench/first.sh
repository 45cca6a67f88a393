#!/usr/bin/env bash
# Runs BenchmarkFirstContentWordByWord (issue 37's first-content target:
# answers with no risk word, a word every 20 ms with its leading space)
# against this checkout's safety package and an earlier commit's,
# alternated, and prints what the filter adds to first content, p50, in
# each (docs/safety.md, "Benchmarks"). The default base is the filter that
# let a word out only once the whitespace after it had arrived, which
# misses the target by one word. Usage, from the module root:
#
#	bash safety/bench/first.sh [base-commit] [runs]
set -euo pipefail
base=${1:-d1a0b24}
runs=${2:-3}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The earlier package, with the module files it built with, and this
# checkout's benchmark file, which uses only the filter's exported API.
git -C "$root" archive "$base" go.mod go.sum safety | tar -x -C "$tmp"
cp "$root/safety/bench_words_test.go" "$tmp/safety/"
run() { # dir → "added p50 ms, answers waited %"
	(cd "$1" && go test ./safety -run '^$' -bench 'FirstContentWordByWord$' -benchtime 1x -count 1) |
		awk '/ms-added-p50/ { for (i = 1; i < NF; i++) { if ($(i+1) == "ms-added-p50") a = $i; if ($(i+1) == "%answers-waited") w = $i }
			printf "added p50 %.3f ms, %s %% of answers waited a word\n", a, w }'
}
for i in $(seq "$runs"); do
	echo "run $i: this checkout: $(run "$root")"
	echo "run $i: $base: $(run "$tmp")"
done
