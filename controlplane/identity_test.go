package controlplane_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/safety"
)

// headerLog records one header of every request to a path ending in
// suffix.
type headerLog struct {
	header string
	mu     sync.Mutex
	seen   map[string][]string // path suffix → header values
}

func (h *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	for _, suffix := range []string{"/realtime/client_secrets", "/realtime/calls"} {
		if strings.HasSuffix(r.URL.Path, suffix) {
			h.mu.Lock()
			h.seen[suffix] = append(h.seen[suffix], r.Header.Get(h.header))
			h.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// The provider sees the user only as the salted hash chat sends as its
// safety_identifier: the OpenAI-Safety-Identifier header on the direct
// session's client secret and on the sideband session's call, never the
// user id.
func TestVoiceSendsTheSafetyIdentifier(t *testing.T) {
	t.Parallel()
	ids := safety.NewIdentifiers([]byte("test-key"))
	log := &headerLog{header: "OpenAI-Safety-Identifier", seen: map[string][]string{}}
	f := newFixture(t, options{rtTransport: log, safetyIDs: ids})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	direct, sideband := newUser(t, "pro"), newUser(t, "pro")
	mustStart(t, f, direct, `{"mode":"direct"}`)
	sidebandCall(t, ctx, f, sideband)
	cases := []struct {
		name, suffix, user string
	}{
		{"direct: the client secret", "/realtime/client_secrets", direct.UserID},
		{"sideband: the call", "/realtime/calls", sideband.UserID},
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, tc := range cases {
		got, want := log.seen[tc.suffix], ids.For(tc.user)
		if len(got) != 1 || got[0] != want || strings.Contains(got[0], tc.user) {
			t.Errorf("%s: got %q, want [%q]", tc.name, got, want)
		}
	}
}
