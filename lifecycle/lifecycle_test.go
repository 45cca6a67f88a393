package lifecycle_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/lifecycle"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// at is a clock standing at noon UTC of date.
func at(date string) func() time.Time {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		panic(err)
	}
	return func() time.Time { return t.Add(12 * time.Hour) }
}

type fixture struct {
	checker *lifecycle.Checker
	reg     *prometheus.Registry
	logs    *logbuf.Buffer
}

func newChecker(t *testing.T, lister lifecycle.Lister, now func() time.Time, models ...lifecycle.Configured) fixture {
	t.Helper()
	f := fixture{reg: prometheus.NewRegistry(), logs: &logbuf.Buffer{}}
	c, err := lifecycle.New(lifecycle.Params{Models: models, Lister: lister, Now: now, Registerer: f.reg,
		Logger: slog.New(slog.NewJSONHandler(f.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.checker = c
	return f
}

func simLister(t *testing.T, cfg sim.Config) lifecycle.Lister {
	t.Helper()
	if cfg.Latency == nil {
		cfg.Latency = simtest.ZeroLatency()
	}
	_, ts := simtest.NewServer(t, cfg)
	l, err := lifecycle.NewOpenAILister(ts.URL+"/v1", simtest.TestKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Against the simulator's models list: a model within 30 days of its date
// is warned about (model, date, replacement) and shown in the metric; one
// past it is an error; one with no date is neither.
func TestCheckAgainstSimulator(t *testing.T) {
	t.Parallel()
	lister := simLister(t, sim.Config{ShutdownDates: sim.DefaultShutdownDates()})
	cases := []struct {
		name     string
		today    string
		model    string
		retired  bool
		warned   bool
		daysLeft float64 // ignored when the model has no date
	}{
		{"far from its date", "2026-10-01", "gpt-5-mini", false, false, 71},
		{"within 30 days", "2026-11-24", "gpt-5-mini", false, true, 17},
		{"30 days exactly", "2026-11-11", "gpt-5-mini", false, true, 30},
		{"a snapshot listed with its family's date", "2026-11-24", "gpt-5-mini-2025-08-07", false, true, 17},
		{"on its date", "2026-12-11", "gpt-5-mini", true, false, 0},
		{"past its date", "2027-01-15", "gpt-4.1-mini", true, false, -1},
		{"no date announced", "2026-11-24", "gpt-6-luna", false, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newChecker(t, lister, at(tc.today), lifecycle.Configured{Key: "chat.model", Model: tc.model})
			_, err := f.checker.Check(t.Context())
			if got := errors.Is(err, lifecycle.ErrRetired); got != tc.retired {
				t.Fatalf("retired: got %v (%v), want %v", got, err, tc.retired)
			}
			if tc.retired && !strings.Contains(err.Error(), "chat.model "+tc.model+" was shut down on") ||
				tc.retired && !strings.Contains(err.Error(), "replace it with gpt-6") {
				t.Errorf("error %q does not name the key, model, date and replacement", err)
			}
			logs := f.logs.String()
			if got := strings.Contains(logs, `"level":"WARN"`) && strings.Contains(logs, `"model":"`+tc.model+`"`); got != tc.warned {
				t.Errorf("warned: got %v, want %v; logs %s", got, tc.warned, logs)
			}
			if tc.warned && (!strings.Contains(logs, `"shutdown_date":"2026-12-11"`) || !strings.Contains(logs, `"replacement":"gpt-6.1-terra"`)) {
				t.Errorf("the warning does not name the date and the replacement: %s", logs)
			}
			n := testutil.CollectAndCount(f.reg, "voxgate_model_shutdown_days_left")
			if tc.model == "gpt-6-luna" {
				if n != 0 {
					t.Errorf("got %d days-left series for a model with no date, want none", n)
				}
				return
			}
			want := tc.daysLeft
			if n != 1 {
				t.Fatalf("got %d days-left series, want 1", n)
			}
			g, err := f.reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := g[0].GetMetric()[0].GetGauge().GetValue()
			if got != want {
				t.Errorf("days left: got %v, want %v", got, want)
			}
		})
	}
}

// A provider that does not answer, or has no models list, is logged and
// skipped: not fatal.
func TestCheckProviderDown(t *testing.T) {
	t.Parallel()
	noList := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(noList.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cases := []struct{ name, url string }{
		{"no models list", noList.URL + "/v1"},
		{"not answering", closed.URL + "/v1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := lifecycle.NewOpenAILister(tc.url, "sk-x", nil)
			if err != nil {
				t.Fatal(err)
			}
			// gpt-5-mini is past its date on this day: still no error, the
			// date was not read.
			f := newChecker(t, l, at("2027-06-01"), lifecycle.Configured{Key: "chat.model", Model: "gpt-5-mini"})
			if _, err := f.checker.Check(t.Context()); err != nil {
				t.Fatalf("got %v, want nil", err)
			}
			// Another vendor's model does not wait on OpenAI's list: the
			// table refuses it all the same.
			f2 := newChecker(t, l, at("2027-06-01"), lifecycle.Configured{Key: "chat.model", Model: "gpt-5-mini"},
				lifecycle.Configured{Key: "routes[0].targets[1].model", Model: "claude-sonnet-4-5", Unlisted: true})
			if _, err := f2.checker.Check(t.Context()); !errors.Is(err, lifecycle.ErrRetired) || strings.Contains(err.Error(), "gpt-5-mini") {
				t.Fatalf("got %v, want only the Anthropic target refused", err)
			}
			if logs := f.logs.String(); !strings.Contains(logs, "could not be read") {
				t.Fatalf("no warning logged: %s", logs)
			}
		})
	}
}

// A provider whose list leaves a configured model out (as a list may once
// the model is gone): the embedded table's date speaks for it.
func TestCheckUnlistedModelUsesTable(t *testing.T) {
	t.Parallel()
	lister := simLister(t, sim.Config{Models: []string{"gpt-6-luna"}})
	cases := []struct {
		model   string
		retired bool
		unknown bool
	}{
		{"gpt-realtime", true, false},    // the table: 2027-01-20
		{"gpt-house-model", false, true}, // neither listed nor in the table
	}
	for _, tc := range cases {
		f := newChecker(t, lister, at("2027-02-01"), lifecycle.Configured{Key: "voice.model", Model: tc.model})
		st, err := f.checker.Check(t.Context())
		if got := errors.Is(err, lifecycle.ErrRetired); got != tc.retired {
			t.Errorf("%s: retired got %v (%v), want %v", tc.model, got, err, tc.retired)
		}
		if tc.retired && !strings.Contains(err.Error(), "replace it with gpt-realtime-2.1") {
			t.Errorf("%s: error %q does not name the replacement", tc.model, err)
		}
		if len(st) != 1 || st[0].Listed {
			t.Errorf("%s: status %+v, want one, not listed", tc.model, st)
		}
		if got := strings.Contains(f.logs.String(), "not in the provider's list"); got != tc.unknown {
			t.Errorf("%s: 'not in the list' warning: got %v, want %v", tc.model, got, tc.unknown)
		}
	}
}

// signalLister counts its calls on a channel.
type signalLister struct{ calls chan struct{} }

func (s signalLister) ListModels(context.Context) ([]lifecycle.Listed, error) {
	s.calls <- struct{}{}
	return nil, nil
}

// Run checks again every period until its context ends.
func TestRunChecksPeriodically(t *testing.T) {
	t.Parallel()
	l := signalLister{calls: make(chan struct{})}
	c, err := lifecycle.New(lifecycle.Params{Lister: l, Every: time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		Models: []lifecycle.Configured{{Key: "chat.model", Model: "m"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	for range 3 {
		select {
		case <-l.calls:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not check again")
		}
	}
	cancel()
	go func() {
		for range l.calls { // a check in flight when ctx ended
		}
	}()
	<-done
}

func TestLoadRetirements(t *testing.T) {
	t.Parallel()
	r, err := lifecycle.DefaultRetirements()
	if err != nil {
		t.Fatal(err)
	}
	const page = "the one OpenAI's deprecations page names"
	cases := []struct{ model, shutdown, replacement string }{
		{"gpt-5-mini", "2026-12-11", "gpt-6.1-terra"},
		{"gpt-4.1-mini-2025-04-14", "2027-01-14", "gpt-6-luna"},
		{"gpt-realtime", "2027-01-20", "gpt-realtime-2.1"},
		{"gpt-realtime-mini", "2027-01-20", "gpt-realtime-2.1-mini"},
		{"gpt-4o-mini-transcribe", "2027-02-26", "gpt-live-transcribe or gpt-transcribe"},
		// issue 39: openai-go v3.98.0's announcements, snapshots by family
		{"o3", "2026-12-11", page},
		{"o3-2025-04-16", "2026-12-11", page},
		{"o3-pro", "2026-12-11", page},
		{"gpt-5-pro-2025-10-06", "2026-12-11", page},
		{"tts-1", "2027-01-06", page},
		{"tts-1-hd", "2027-01-06", page},
		{"gpt-4o-mini-tts-2025-12-15", "2027-01-06", page},
		{"gpt-audio-mini-2025-10-06", "2027-01-20", page},
		{"gpt-5.1-2025-11-13", "2027-04-01", page},
		{"gpt-5.4-nano-2026-03-17", "2027-04-01", page},
		// issue 39: Anthropic's (snapshots by family too) and Gemini's
		{"claude-sonnet-4-5", "2026-11-30", "claude-sonnet-5-5"},
		{"claude-sonnet-4-5-20250929", "2026-11-30", "claude-sonnet-5-5"},
		{"claude-opus-4-5-20251101", "2027-01-22", "the one Anthropic's deprecations page names"},
		{"gemini-2.5-pro", "2026-12-01", "gemini-3.8-flash"},
		{"gemini-2.5-flash", "2026-12-01", "gemini-3.5-flash-lite"},
		{"gemini-3.7-flash", "2026-10-08", "gemini-3.8-flash"},
		{"gemini-3.5-flash", "2026-10-08", "gemini-3.6-flash"},
	}
	for _, tc := range cases {
		got, ok := r.Lookup(tc.model)
		if !ok || got.Shutdown.Format(time.DateOnly) != tc.shutdown || got.Replacement != tc.replacement {
			t.Errorf("%s: got %+v (%v), want %s → %s", tc.model, got, ok, tc.shutdown, tc.replacement)
		}
	}
	for _, m := range []string{"gpt-6-luna", "gpt-5.4-mini", "o3-mini", "claude-sonnet-5-5", "gemini-3.5-flash-lite", "gemini-2.5-flash-lite"} {
		if _, ok := r.Lookup(m); ok {
			t.Errorf("%s has no announced shutdown", m)
		}
	}
	bad := []string{
		"models: {m: {shutdown: \"2027-01-01\", replacement: x}}\n",                  // no source
		"source: s\nmodels: {m: {shutdown: \"Jan 1\", replacement: x}}\n",            // bad date
		"source: s\nmodels: {m: {shutdown: \"2027-01-01\"}}\n",                       // no replacement
		"source: s\nmodels: {m: {shutdown: \"2027-01-01\", replacement: x, y: 1}}\n", // unknown key
	}
	for _, b := range bad {
		if _, err := lifecycle.LoadRetirements([]byte(b)); err == nil {
			t.Errorf("%q: accepted", b)
		}
	}
}
