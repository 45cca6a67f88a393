package simtest

import (
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/voxgate/voxgate/sim"
)

// TestKey is the API key tests use; the default config accepts any key.
const TestKey = "sk-test"

// NewServer starts a simulator on a loopback httptest server and closes both
// when the test ends (the simulator first, so hanging requests end).
func NewServer(tb testing.TB, cfg sim.Config) (*sim.Server, *httptest.Server) {
	tb.Helper()
	return start(tb, cfg, false)
}

// NewTLSServer is NewServer over TLS with HTTP/2, as the real API is
// served: clients given ts.Client's TLS configuration multiplex their
// streams over shared connections.
func NewTLSServer(tb testing.TB, cfg sim.Config) (*sim.Server, *httptest.Server) {
	tb.Helper()
	return start(tb, cfg, true)
}

func start(tb testing.TB, cfg sim.Config, tls bool) (*sim.Server, *httptest.Server) {
	tb.Helper()
	if cfg.ShutdownDates == nil {
		// A test fixture must not expire: tests that name a model the
		// provider is retiring go on passing after its date. Tests of the
		// models' lifecycle set the dates (and the clock) they need.
		cfg.ShutdownDates = map[string]string{}
	}
	s, err := sim.New(cfg)
	if err != nil {
		tb.Fatalf("sim.New: %v", err)
	}
	ts := httptest.NewUnstartedServer(s)
	if tls {
		ts.EnableHTTP2 = true
		ts.StartTLS()
	} else {
		ts.Start()
	}
	tb.Cleanup(ts.Close)
	tb.Cleanup(func() { _ = s.Close() })
	return s, ts
}

// Client returns an openai-go client for a simulator at baseURL (the
// httptest server's URL). Retries are off so each call is one request.
func Client(baseURL string, opts ...option.RequestOption) openai.Client {
	all := append([]option.RequestOption{
		option.WithBaseURL(baseURL + "/v1/"),
		option.WithAPIKey(TestKey),
		option.WithMaxRetries(0),
	}, opts...)
	return openai.NewClient(all...)
}

// ZeroLatency is a config latency with no delays, for fast tests.
func ZeroLatency() *sim.Latency { return &sim.Latency{} }
