package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A body that does not arrive within server.read_body_timeout is 408
// REQUEST_TIMEOUT with the §5 JSON error on every route that reads one, the
// chat and voice routes included, through the real Main and route table.
func TestStalledBodyIs408OnEveryRoute(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Server.ReadBodyTimeout = 300 * time.Millisecond
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	user, admin := mint(t, "stall-user", "", "pro"), mint(t, "stall-admin", "admin", "")
	cases := []struct{ name, head, tok, ctype, part string }{
		{"chat", "POST /v1/chat", user, "application/json", `{"message":`},
		{"voice start", "POST /v1/voice/sessions", user, "application/json", `{"voice":`},
		{"voice offer", "POST /v1/voice/sessions/vs_1/sdp", user, "application/sdp", "v=0\r\n"},
		{"voice action", "POST /v1/voice", user, "application/json", `{"action":`},
		{"tool call", "POST /v1/voice/sessions/vs_1/tool-calls", user, "application/json", `{"name":`},
		{"admin plan", "PUT /v1/admin/users/u/plan", admin, "application/json", `{"plan":`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", m.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := tc.head + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tc.tok + "\r\nContent-Type: " + tc.ctype +
				"\r\nContent-Length: 1000\r\n\r\n" + tc.part
			if _, err := io.WriteString(c, req); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			b, _ := io.ReadAll(c)
			status, _, _ := strings.Cut(string(b), "\r\n")
			if status != "HTTP/1.1 408 Request Timeout" || !strings.Contains(string(b), `"code":"REQUEST_TIMEOUT"`) {
				t.Fatalf("got %q, want 408 with a REQUEST_TIMEOUT JSON error", b)
			}
		})
	}
}
