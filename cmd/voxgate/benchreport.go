package main

import (
	"fmt"
	"io"
	"time"

	"github.com/voxgate/voxgate/internal/capacity"
)

// benchRow is one case of voxgate bench: the load, what the mock did
// alone, what the gateway did, and the CPU around the gateway's run.
type benchRow struct {
	round      int
	mode       string // modeWhole, modeStream or modeChat
	load       capacity.Load
	direct     capacity.Result
	gateway    capacity.Result
	gatewayCPU time.Duration
	pg         capacity.PGDelta
	// statements and roundTrips are what the gateway sent PostgreSQL
	// during its run (its own counters; background work included).
	statements, roundTrips float64
	counted                bool
	// resp is the Responses case of a streamed load (benchresponses.go).
	resp *respRow
}

// perRequest is d over the gateway run's requests.
func (r benchRow) perRequest(d time.Duration) time.Duration {
	if r.gateway.Requests == 0 {
		return 0
	}
	return d / time.Duration(r.gateway.Requests)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func printBenchRow(w io.Writer, r benchRow) {
	kind := map[string]string{modeWhole: "whole", modeStream: "streamed (first content)",
		modeChat:  "chat turns, streamed (first content; direct is the mock's completion)",
		modeVoice: "voice sessions, direct mode, started and ended (the start's time; direct is the mock's mint)"}[r.mode]
	g, d := r.gateway, r.direct
	fmt.Fprintf(w, "round %d, %d client(s), %s:\n", r.round, r.load.Clients, kind)
	fmt.Fprintf(w, "  requests/s        gateway %.0f, mock direct %.0f (ratio %.3f); failed %d", g.PerSecond(), d.PerSecond(),
		ratio(g.PerSecond(), d.PerSecond()), g.Failed)
	if g.FirstError != "" {
		fmt.Fprintf(w, " (first: %s)", g.FirstError)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  latency p50       gateway %s, direct %s, added %s\n", ms(g.Quantile(0.5)), ms(d.Quantile(0.5)), ms(g.Quantile(0.5)-d.Quantile(0.5)))
	fmt.Fprintf(w, "  latency p99       gateway %s, direct %s, added %s\n", ms(g.Quantile(0.99)), ms(d.Quantile(0.99)), ms(g.Quantile(0.99)-d.Quantile(0.99)))
	fmt.Fprintf(w, "  CPU per request   gateway %s", ms(r.perRequest(r.gatewayCPU)))
	if r.pg.Local {
		fmt.Fprintf(w, ", PostgreSQL backends %s, PostgreSQL background %s", ms(r.perRequest(r.pg.Gateway)), ms(r.perRequest(r.pg.Background)))
	} else {
		fmt.Fprint(w, ", PostgreSQL not on this machine (no CPU figure)")
	}
	fmt.Fprintln(w)
	if n := float64(g.Requests); n > 0 {
		fmt.Fprintf(w, "  PostgreSQL/req    %.2f rows written", float64(r.pg.Rows)/n)
		if r.counted {
			fmt.Fprintf(w, ", %.2f statements in %.2f round trips (the gateway's count)", r.statements/n, r.roundTrips/n)
		}
		if r.pg.Statements >= 0 {
			fmt.Fprintf(w, ", %.2f statements (pg_stat_statements)", float64(r.pg.Statements)/n)
		}
		fmt.Fprintln(w)
	}
	printRespRow(w, r)
	fmt.Fprintln(w)
}

// capacityKinds name what printCapacity estimates for, by mode: whole
// and streamed completions are one kind.
var capacityKinds = []struct{ what, unit string }{{"completions", "requests"}, {"chat turns", "turns"}, {"voice sessions", "sessions"}}

func capacityKind(mode string) string {
	switch mode {
	case modeChat:
		return "chat turns"
	case modeVoice:
		return "voice sessions"
	}
	return "completions"
}

// printCapacity estimates, from the PostgreSQL CPU per request of the
// heaviest load measured, how many requests per second a server of each
// core count would serve if its CPU were the only limit: for completions,
// chat turns and voice sessions, each when it was measured.
func printCapacity(w io.Writer, rows []benchRow, cores []int) {
	for _, k := range capacityKinds {
		what := k.what
		var best benchRow
		found := false
		for _, r := range rows {
			if capacityKind(r.mode) != what {
				continue
			}
			found = true
			if r.pg.Local && r.gateway.Requests > best.gateway.Requests {
				best = r
			}
		}
		if !found {
			continue
		}
		per := best.perRequest(best.pg.Gateway + best.pg.Background)
		if per <= 0 {
			fmt.Fprintf(w, "capacity, %s: no PostgreSQL CPU was measured (the server is not on this machine)\n", what)
			continue
		}
		fmt.Fprintf(w, "capacity, %s: PostgreSQL spends %s of CPU per one (backends and background, at %d clients);\n", what, ms(per), best.load.Clients)
		fmt.Fprintln(w, "if its CPU were the only limit, a server would serve about:")
		for _, n := range cores {
			fmt.Fprintf(w, "  %3d cores: %8.0f %s/s\n", n, float64(n)*float64(time.Second)/float64(per), k.unit)
		}
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
