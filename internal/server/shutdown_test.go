package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
)

// A request whose client goes away is recorded as 499 in the access log
// and the metrics, and is not logged as a server error.
func TestClientGoneIs499(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	started := make(chan struct{})
	ts := f.serve(t, Route{Pattern: "GET /v1/wait", Handler: f.srv.Public(func(w http.ResponseWriter, r *http.Request) error {
		close(started)
		return waitOnDatabase(w, r)
	})})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/wait", nil)
	go func() {
		<-started
		cancel()
	}()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request completed; want it cancelled by the client")
	}
	testkit.Eventually(t, context.Background(), "the abandoned request's access log line", func() bool {
		return strings.Contains(f.logs.String(), `"route":"GET /v1/wait"`)
	})
	logs := f.logs.String()
	if !strings.Contains(logs, `"route":"GET /v1/wait","status":499`) {
		t.Fatalf("access log: want status 499 for the abandoned request:\n%s", logs)
	}
	if strings.Contains(logs, `"level":"ERROR"`) {
		t.Fatalf("an abandoned request was logged as an error:\n%s", logs)
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `voxgate_http_requests_total{code="499",route="GET /v1/wait"} 1`; !strings.Contains(string(b), want) {
		t.Fatalf("metrics lack %q", want)
	}
}

// Shutdown returns within its timeout plus the grace period even when a
// request waits on a database that never answers: the request's context is
// cancelled as a shutdown (not a client gone) and it answers 503.
func TestShutdownIsBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	started := make(chan struct{})
	ts := f.serve(t, Route{Pattern: "GET /v1/wait", Stream: true, Handler: f.srv.Public(func(w http.ResponseWriter, r *http.Request) error {
		close(started)
		return waitOnDatabase(w, r)
	})})
	type result struct {
		status int
		retry  string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get(ts.URL + "/v1/wait")
		if err != nil {
			got <- result{err: err}
			return
		}
		resp.Body.Close()
		got <- result{status: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
	}()
	<-started
	start := time.Now()
	err := f.srv.Shutdown(ts.Config, 300*time.Millisecond)
	if took := time.Since(start); took > 300*time.Millisecond+shutdownGrace+500*time.Millisecond {
		t.Fatalf("Shutdown took %s, want at most timeout + grace", took)
	}
	if err == nil {
		t.Fatal("Shutdown returned nil; want an error saying requests were cancelled")
	}
	var r result
	select {
	case r = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the request in flight was never answered")
	}
	if r.err != nil || r.status != 503 || r.retry == "" {
		t.Fatalf("request in flight: got %d (Retry-After %q) %v, want 503 with Retry-After", r.status, r.retry, r.err)
	}
	if !f.srv.Draining() {
		t.Fatal("not draining after Shutdown")
	}
}
