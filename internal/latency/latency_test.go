package latency_test

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/latency"
)

func TestMillis(t *testing.T) {
	t.Parallel()
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name   string
		sample []time.Duration
		q      float64
		want   float64
	}{
		{"one value", ms(7), .99, 7},
		{"median of sorted", ms(1, 2, 3, 4, 5), .5, 3},
		{"median of unsorted", ms(5, 1, 4, 2, 3), .5, 3},
		{"p99 of 100 is the 99th", ms(seq(100)...), .99, 99},
		{"p0", ms(3, 1, 2), 0, 1},
		{"p100", ms(3, 1, 2), 1, 3},
		{"sub-millisecond", []time.Duration{1500 * time.Microsecond}, .5, 1.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]time.Duration(nil), tc.sample...)
			if got := latency.Millis(t, tc.sample, tc.q); got != tc.want {
				t.Errorf("got %v ms, want %v", got, tc.want)
			}
			for i := range before {
				if tc.sample[i] != before[i] {
					t.Fatalf("the sample was changed: got %v, want %v", tc.sample, before)
				}
			}
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// recorder is a testing.TB that keeps a Fatal's message instead of
// stopping the test that uses it.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = format
	runtime.Goexit()
}

// TestMillisRefuses: an empty sample or a quantile outside [0, 1] fails
// with a message saying so, rather than panicking or reporting 0.
func TestMillisRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		sample []time.Duration
		q      float64
		want   string
	}{
		{"empty", nil, .5, "empty sample"},
		{"q above 1", []time.Duration{1}, 50, "not within 0 and 1"},
		{"q below 0", []time.Duration{1}, -.1, "not within 0 and 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			var wg sync.WaitGroup
			wg.Go(func() { latency.Millis(r, tc.sample, tc.q) })
			wg.Wait()
			if !strings.Contains(r.msg, tc.want) {
				t.Errorf("got failure %q, want one saying %q", r.msg, tc.want)
			}
		})
	}
}
