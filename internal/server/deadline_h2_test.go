package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Over HTTP/2 without TLS (which voxgate serves on the same port), a body
// that stalls is 408 REQUEST_TIMEOUT too: there net/http leaves the
// request's context alone, and the failed read itself says why.
func TestStalledBodyIsRequestTimeoutOverHTTP2(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *config.Config) { c.Server.ReadBodyTimeout = 300 * time.Millisecond })
	f.srv.Mount(append(testRoutes(f.srv),
		Route{Pattern: "POST /v1/json", Handler: f.srv.Public(func(w http.ResponseWriter, r *http.Request) error {
			var v map[string]any
			if err := httpx.DecodeJSON(r, &v); err != nil {
				return err
			}
			httpx.WriteJSON(w, 200, v)
			return nil
		})},
		Route{Pattern: "POST /v1/offer", Handler: f.srv.Public(func(w http.ResponseWriter, r *http.Request) error {
			if _, err := io.ReadAll(r.Body); err != nil {
				return apierr.Wrap(apierr.InvalidRequest, "The offer could not be read.", err)
			}
			w.WriteHeader(201)
			return nil
		})},
	))
	url := newH2C(t, f.srv)
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, path := range []string{"/v1/json", "/v1/offer"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			pr, pw := io.Pipe()
			defer pw.Close()
			go func() { _, _ = pw.Write([]byte(`{"a":`)) }() // and nothing more
			req, _ := http.NewRequest("POST", url+path, pr)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.ProtoMajor != 2 || resp.StatusCode != 408 || !strings.Contains(string(b), `"code":"REQUEST_TIMEOUT"`) {
				t.Fatalf("got %s %d %s, want HTTP/2 408 REQUEST_TIMEOUT", resp.Proto, resp.StatusCode, b)
			}
		})
	}
}

// newH2C serves h over HTTP/1.1 and HTTP/2 without TLS.
func newH2C(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	ts.Config.Protocols = p
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}
