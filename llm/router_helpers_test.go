package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The two targets of the test route: two simulators, so each one's
// requests can be counted and timed apart.
const (
	primaryModel  = "gpt-4o"
	fallbackModel = "gpt-4o-mini"
	routedAnswer  = "Oats with berries make a good breakfast."
)

// upstream is a simulator behind a server that notes when each chat
// request arrived.
type upstream struct {
	sim *sim.Server
	url string

	mu       sync.Mutex
	arrivals []time.Time
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	s, err := sim.New(sim.Config{Latency: simtest.ZeroLatency(), ShutdownDates: map[string]string{},
		Script: sim.Script{Rules: []sim.Rule{{Name: "answer", Reply: sim.Reply{Text: routedAnswer}}}}})
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{sim: s}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sim.EndpointChatCompletions {
			u.mu.Lock()
			u.arrivals = append(u.arrivals, time.Now())
			u.mu.Unlock()
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = s.Close() })
	u.url = ts.URL + "/v1"
	return u
}

// fault installs f on this simulator's chat endpoint.
func (u *upstream) fault(t *testing.T, f sim.Fault) {
	t.Helper()
	f.Endpoint = sim.EndpointChatCompletions
	if _, err := u.sim.AddFault(f); err != nil {
		t.Fatal(err)
	}
}

func (u *upstream) hits() []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]time.Time(nil), u.arrivals...)
}

// clock is the breakers' injectable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// harness is a router over two simulators: route "chat" tries primary,
// then fallback.
type harness struct {
	primary, fallback *upstream
	router            *llm.Router
	clock             *clock
	reg               *prometheus.Registry
}

// Short deadlines, so that no case waits long: the route's budget, and each
// target's first content and between-chunk timeout. slack is what a case
// may take beyond the deadlines it is about: on a loaded 2-core machine a
// simulator's answer can take a second.
const (
	testBudget       = 6 * time.Second
	testFirstContent = 2 * time.Second
	testRetryDelay   = 100 * time.Millisecond
	slack            = 2 * time.Second
)

func newHarness(t *testing.T, tune ...func(*llm.Route)) *harness {
	t.Helper()
	h := &harness{primary: newUpstream(t), fallback: newUpstream(t),
		clock: &clock{now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}, reg: prometheus.NewRegistry()}
	route := llm.Route{Name: "chat", Budget: testBudget, Targets: []llm.Target{
		{Provider: "primary", Model: primaryModel, FirstContent: testFirstContent, Timeout: testFirstContent},
		{Provider: "fallback", Model: fallbackModel, FirstContent: testFirstContent, Timeout: testFirstContent},
	}}
	for _, f := range tune {
		if f != nil {
			f(&route)
		}
	}
	r, err := llm.NewRouter(llm.RouterParams{
		Providers: map[string]llm.Provider{
			"primary":  newOpenAI(t, h.primary.url, 0, nil),
			"fallback": newOpenAI(t, h.fallback.url, 0, nil),
		},
		Routes: []llm.Route{route}, Registerer: h.reg, Now: h.clock.Now, RetryDelay: testRetryDelay,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.router = r
	return h
}

// routed is one routed call, read to its end.
type routed struct {
	text     string
	calls    []llm.ToolCall
	done     *llm.Event
	err      error
	routeErr *llm.RouteError
	took     time.Duration
}

func (h *harness) call(t *testing.T, req llm.Request) routed {
	t.Helper()
	// Bounded, so a case that hangs fails instead.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	var out routed
	defer func() { out.took = time.Since(start) }()
	st, err := h.router.Stream(ctx, req)
	if err == nil {
		defer st.Close()
		for {
			ev, e := st.Next(ctx)
			if errors.Is(e, io.EOF) {
				break
			}
			if e != nil {
				err = e
				break
			}
			switch ev.Kind {
			case llm.EventText:
				out.text += ev.Text
			case llm.EventToolCall:
				out.calls = append(out.calls, *ev.ToolCall)
			case llm.EventDone:
				out.done = &ev
			}
		}
	}
	out.err = err
	if err != nil {
		if !errors.As(err, &out.routeErr) {
			t.Fatalf("got %v (%T), want a *llm.RouteError", err, err)
		}
	}
	out.took = time.Since(start)
	return out
}

// trace is the call's trace, from EventDone or the error.
func (r routed) trace() llm.Trace {
	if r.done != nil {
		return r.done.Trace
	}
	if r.routeErr != nil {
		return r.routeErr.Trace
	}
	return nil
}

func ask() llm.Request { return userRequest("chat", "what should I eat?") }

// counter is voxgate_llm_attempts_total for one label set.
func (h *harness) counter(provider, model, outcome string) prometheus.Collector {
	return gathered{h.reg, "voxgate_llm_attempts_total", map[string]string{"provider": provider, "model": model, "outcome": outcome}}
}

// series is any one series of the registry, by name and labels.
func (h *harness) series(name string, labels map[string]string) prometheus.Collector {
	return gathered{h.reg, name, labels}
}

// breakerGauge is the primary's voxgate_llm_breaker_state.
func (h *harness) breakerGauge() prometheus.Collector {
	return gathered{h.reg, "voxgate_llm_breaker_state", map[string]string{"provider": "primary", "model": primaryModel}}
}

// gathered is one series of a registry, as a collector testutil reads.
type gathered struct {
	reg    *prometheus.Registry
	name   string
	labels map[string]string
}

func (g gathered) Describe(chan<- *prometheus.Desc) {}

func (g gathered) Collect(ch chan<- prometheus.Metric) {
	mfs, _ := g.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != g.name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := len(m.GetLabel()) == len(g.labels)
			for _, l := range m.GetLabel() {
				match = match && g.labels[l.GetName()] == l.GetValue()
			}
			if !match {
				continue
			}
			v, typ := m.GetGauge().GetValue(), prometheus.GaugeValue
			switch {
			case m.Counter != nil:
				v, typ = m.GetCounter().GetValue(), prometheus.CounterValue
			case m.Histogram != nil: // its count of observations
				v, typ = float64(m.GetHistogram().GetSampleCount()), prometheus.CounterValue
			}
			ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(g.name, "", nil, nil), typ, v)
		}
	}
}
