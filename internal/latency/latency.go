// Package latency reads percentiles from the latency samples benchmarks
// take, in the one way every benchmark reports them, so figures from
// different benchmarks compare.
package latency

import (
	"slices"
	"testing"
	"time"
)

// Millis is quantile q (0 to 1) of sample in milliseconds: the
// nearest-rank value at index ⌊(n−1)·q⌋ of the sorted sample, which is
// not changed. An empty sample, or q outside [0, 1], fails tb at once:
// a benchmark whose every call failed must say so, not report 0 or panic
// on an index.
func Millis(tb testing.TB, sample []time.Duration, q float64) float64 {
	tb.Helper()
	if len(sample) == 0 {
		tb.Fatalf("latency: percentile %v of an empty sample: no call was measured", q)
	}
	if q < 0 || q > 1 {
		tb.Fatalf("latency: percentile %v is not within 0 and 1", q)
	}
	sorted := sample
	if !slices.IsSorted(sample) {
		sorted = slices.Clone(sample)
		slices.Sort(sorted)
	}
	return float64(sorted[int(float64(len(sorted)-1)*q)]) / float64(time.Millisecond)
}
