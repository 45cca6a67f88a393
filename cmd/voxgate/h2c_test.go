package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A load balancer that speaks HTTP/2 without TLS to its backends carries
// several streamed turns over one connection; HTTP/1.1 clients are served
// on the same port (every other test uses one).
func TestChatOverHTTP2(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	var dials atomic.Int64
	tr := &http.Transport{
		Protocols: new(http.Protocols),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	// One request first, so the turns below find the connection open.
	resp, err := client.Get(m.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("/healthz over %s, want HTTP/2", resp.Proto)
	}

	const turns = 3
	var wg sync.WaitGroup
	for i := range turns {
		wg.Go(func() {
			tok := mint(t, "h2-user-"+string(rune('a'+i)), "", "pro")
			req, _ := http.NewRequest("POST", m.URL()+"/v1/chat", strings.NewReader(`{"message":"hello"}`))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
				t.Errorf("turn %d: %s %d", i, resp.Proto, resp.StatusCode)
			}
			names := eventNames(t, resp)
			if len(names) < 3 || names[0] != "session" || names[len(names)-1] != "done" {
				t.Errorf("turn %d: events %v", i, names)
			}
		})
	}
	wg.Wait()
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections for %d turns and a probe, want 1", n, turns)
	}
}
