package llm_test

import (
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// faultTimeout is the adapters' timeout in the cases of the fault tables
// that are about it: short, so a silent upstream fails fast.
const faultTimeout = 300 * time.Millisecond

// faultCase is one failure an adapter's simulator surface serves, and what
// the adapter must make of it.
type faultCase struct {
	name       string
	cfg        sim.Config
	fault      *sim.Fault
	req        func(llm.Request) llm.Request
	code       llm.Code
	retryable  bool
	retryAfter int
	status     int
	// atStream: the failure comes from Stream, before the first event
	// (where the router may fail over); else from Next, after some text.
	atStream bool
}

// timeout is the adapter's timeout for the case: faultTimeout where the
// case is the timeout firing, else testkit.ProviderTimeout, so that on a
// loaded machine the other cases' dial and chunks are not cut by it.
func (c faultCase) timeout() time.Duration {
	if c.code == llm.ProviderTimeout {
		return faultTimeout
	}
	return testkit.ProviderTimeout
}

// faultSurface is an adapter against its own simulator surface.
type faultSurface struct {
	endpoint, model, answer string
	start                   func(t *testing.T, cfg sim.Config, timeout time.Duration) llm.Provider
}

// runFaults serves each case on a simulator of its own and checks the
// adapter's *Error: code, retry advice, status, and where it surfaced,
// after some of the answer when it comes from Next.
func runFaults(t *testing.T, surf faultSurface, cases []faultCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := c.cfg
			cfg.Script = sim.Script{Text: surf.answer}
			if c.fault != nil {
				f := *c.fault
				f.Endpoint = surf.endpoint
				cfg.Faults = []sim.Fault{f}
			}
			p := surf.start(t, cfg, c.timeout())
			req := userRequest(surf.model, "hello")
			if c.req != nil {
				req = c.req(req)
			}
			st, err := p.Stream(t.Context(), req)
			if c.atStream {
				if err == nil {
					st.Close()
					t.Fatal("Stream: got nil error, want a failure before the first event")
				}
			} else {
				if err != nil {
					t.Fatalf("Stream: %v, want the failure after the first event", err)
				}
				r := drain(t, st)
				if err = r.err; err == nil {
					t.Fatal("the stream ended without the injected failure")
				}
				if r.text == "" || len(surf.answer) < len(r.text) || r.text != surf.answer[:len(r.text)] {
					t.Errorf("text before the failure: got %q, want a prefix of the answer", r.text)
				}
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Provider != p.Name() {
				t.Fatalf("got %v (%T), want an *llm.Error from %s", err, err, p.Name())
			}
			if e.Code != c.code || e.Retryable != c.retryable || e.RetryAfter != c.retryAfter || e.Status != c.status {
				t.Errorf("got %s retryable %v retry-after %d status %d, want %s %v %d %d (%v)",
					e.Code, e.Retryable, e.RetryAfter, e.Status, c.code, c.retryable, c.retryAfter, c.status, e.Err)
			}
		})
	}
}
