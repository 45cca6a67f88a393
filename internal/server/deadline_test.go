package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// serve mounts extra routes beside the test ones and serves f.srv over real
// TCP, as cmd/voxgate does (BaseContext included).
func (f *fixture) serve(t *testing.T, extra ...Route) *httptest.Server {
	t.Helper()
	f.srv.Mount(append(testRoutes(f.srv), extra...))
	ts := httptest.NewUnstartedServer(f.srv)
	ts.Config.BaseContext = f.srv.BaseContext
	ts.Config.ReadHeaderTimeout = 5 * time.Second
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// waitOnDatabase stands for a handler stuck on a database that does not
// answer: it returns what a database call returns when its context ends.
func waitOnDatabase(w http.ResponseWriter, r *http.Request) error {
	<-r.Context().Done()
	return database.Error("wait", r.Context().Err())
}

// rawRequest writes req on a new connection and returns the first response
// line, or "" when the server closed without one, and how long it took.
func rawRequest(t *testing.T, addr, req string, within time.Duration) (string, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(start.Add(within))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("no answer within %s: %v", within, err)
	}
	return strings.TrimSpace(line), time.Since(start)
}

// A client that promises a body and sends none is answered once
// server.read_body_timeout has passed, on a route that reads the body and
// on one that does not; the connection is not held.
func TestStalledBodyIsCutOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *config.Config) { c.Server.ReadBodyTimeout = 300 * time.Millisecond })
	ts := f.serve(t, Route{Pattern: "POST /v1/echo", Handler: f.srv.Public(func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]any
		if err := httpx.DecodeJSON(r, &v); err != nil {
			return err
		}
		httpx.WriteJSON(w, 200, v)
		return nil
	})})
	addr := ts.Listener.Addr().String()
	for _, req := range []string{
		"POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":",
		"POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n",
		"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
	} {
		line, took := rawRequest(t, addr, req, 5*time.Second)
		if took < 250*time.Millisecond || took > 3*time.Second {
			t.Errorf("%q: answered %q after %s, want about 300ms", strings.SplitN(req, "\r\n", 2)[0], line, took)
		}
	}
}

// The body deadline is lifted once the body is read, so a handler that runs
// past it, or streams, is not cancelled by it.
func TestBodyDeadlineIsNotInherited(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *config.Config) {
		c.Server.ReadBodyTimeout = 200 * time.Millisecond
		c.Server.RequestTimeout = 5 * time.Second
	})
	slow := func(w http.ResponseWriter, r *http.Request) error {
		if _, err := io.ReadAll(r.Body); err != nil {
			return err
		}
		select {
		case <-time.After(600 * time.Millisecond):
		case <-r.Context().Done():
			return fmt.Errorf("context ended: %w", context.Cause(r.Context()))
		}
		httpx.WriteJSON(w, 200, map[string]bool{"ok": true})
		return nil
	}
	ts := f.serve(t, Route{Pattern: "POST /v1/slow", Handler: f.srv.Public(slow)}, Route{Pattern: "GET /v1/slow", Handler: f.srv.Public(slow)})
	for _, method := range []string{"POST", "GET"} {
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"a":1}`)
		}
		req, _ := http.NewRequest(method, ts.URL+"/v1/slow", body)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"ok":true`) {
			t.Fatalf("%s past the body deadline: got %d %q, want 200 ok", method, resp.StatusCode, b)
		}
	}
}

// A non-streaming route's work ends at server.request_timeout: a handler
// stuck on the database answers 503 with Retry-After. A streaming route has
// neither that deadline nor a write deadline, not even one left on its
// connection by an earlier request.
func TestRequestDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *config.Config) { c.Server.RequestTimeout = 300 * time.Millisecond })
	streamFor := 300*time.Millisecond + writeMargin + 500*time.Millisecond
	ts := f.serve(t,
		Route{Pattern: "GET /v1/wait", Handler: f.srv.Public(waitOnDatabase)},
		Route{Pattern: "GET /v1/stream", Stream: true, Handler: f.srv.Public(func(w http.ResponseWriter, r *http.Request) error {
			rc := http.NewResponseController(w)
			w.WriteHeader(200)
			for end := time.Now().Add(streamFor); time.Now().Before(end); {
				if err := r.Context().Err(); err != nil {
					return nil // the test sees the stream end early
				}
				if _, err := io.WriteString(w, "tick\n"); err != nil {
					return nil
				}
				_ = rc.Flush()
				// measurement window: the stream ticks for streamFor, past the
				// request timeout and its write margin, since what is tested
				// is that a stream outlasts them.
				time.Sleep(100 * time.Millisecond)
			}
			io.WriteString(w, "done\n")
			return nil
		})},
	)
	client := &http.Client{Timeout: 15 * time.Second}
	start := time.Now()
	resp, err := client.Get(ts.URL + "/v1/wait")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) // so the stream below reuses the connection
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || took > 2*time.Second {
		t.Fatalf("stuck handler: got %d (Retry-After %q) after %s, want 503 with Retry-After after about 300ms", resp.StatusCode, resp.Header.Get("Retry-After"), took)
	}
	resp, err = client.Get(ts.URL + "/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasSuffix(string(b), "done\n") {
		t.Fatalf("stream: got %q, %v; want it to run past the request and write deadlines to done", b, err)
	}
}

// rawResponse writes req on a new connection and returns the whole
// response the server sent before closing, or what arrived within limit.
func rawResponse(t *testing.T, addr, req string, limit time.Duration) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(limit))
	b, _ := io.ReadAll(c)
	return string(b)
}

// A body that does not arrive in time is 408 REQUEST_TIMEOUT with the §5
// JSON error on every kind of route: one that decodes JSON, a streaming
// one, and one that reads a raw body and calls a failed read a bad
// request (as the voice offer does). The body deadline cuts the read and
// cancels the request's context; that is not a client gone.
func TestStalledBodyIsRequestTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *config.Config) { c.Server.ReadBodyTimeout = 300 * time.Millisecond })
	decode := func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]any
		if err := httpx.DecodeJSON(r, &v); err != nil {
			return err
		}
		httpx.WriteJSON(w, 200, v)
		return nil
	}
	raw := func(w http.ResponseWriter, r *http.Request) error {
		if _, err := io.ReadAll(r.Body); err != nil {
			return apierr.Wrap(apierr.InvalidRequest, "The offer could not be read.", err)
		}
		w.WriteHeader(201)
		return nil
	}
	ts := f.serve(t,
		Route{Pattern: "POST /v1/json", Handler: f.srv.Public(decode)},
		Route{Pattern: "POST /v1/events", Stream: true, Handler: f.srv.Public(decode)},
		Route{Pattern: "POST /v1/offer", Handler: f.srv.Public(raw)},
	)
	cases := []struct{ name, req string }{
		{"json", "POST /v1/json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":"},
		{"json chunked", "POST /v1/json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n"},
		{"stream route", "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":"},
		{"raw body", "POST /v1/offer HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 1000\r\n\r\nv=0\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := rawResponse(t, ts.Listener.Addr().String(), tc.req, 5*time.Second)
			status, _, _ := strings.Cut(resp, "\r\n")
			if status != "HTTP/1.1 408 Request Timeout" || !strings.Contains(resp, `"code":"REQUEST_TIMEOUT"`) ||
				!strings.Contains(resp, "application/json") {
				t.Fatalf("got %q, want 408 with a REQUEST_TIMEOUT JSON error", resp)
			}
		})
	}
}
