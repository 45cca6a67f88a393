package controlplane_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
)

// holderGoroutines counts the goroutines of sideband holders and their
// socket readers in this process.
func holderGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "controlplane.(*Service).runCall") || strings.Contains(g, "controlplane.startReader") {
			n++
		}
	}
	return n
}

// Sideband as the configured default, and no holder goroutine left
// behind: a call ended by the phone, a call the phone left, and a call
// still held when the service closes. Not parallel, so no other test's
// holders are running. The call the phone left goes quiet and ends for
// silence after five seconds; the held one is closed before.
func TestSidebandDefaultModeAndNoLeaks(t *testing.T) {
	f := newFixture(t, options{configFn: func(c *config.Voice) {
		c.Mode, c.IdleTimeout, c.VADIdleTimeout = controlplane.ModeSideband, 5*time.Second, 0
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s := mustStart(t, f, newUser(t, "pro"), `{}`); s.Mode != controlplane.ModeSideband || s.SDPURL == "" || s.ClientSecret != nil {
		t.Fatalf("default start: %+v", s)
	}
	before := holderGoroutines()

	ended, left, held := newUser(t, "pro"), newUser(t, "pro"), newUser(t, "pro")
	s1, _, _ := sidebandCall(t, ctx, f, ended)
	call(t, f.svc.HandleEnd, ended, "POST", "/", []byte(`{}`), s1.SessionID)
	s2, phone, _ := sidebandCall(t, ctx, f, left)
	phone.Close()
	waitEnded(t, ctx, f, left, s2.SessionID)
	sidebandCall(t, ctx, f, held)
	// The holders of the ended calls finish just after their sessions end.
	testkit.Eventually(t, ctx, fmt.Sprintf("%d holder goroutines with one call held", before+2), func() bool {
		return holderGoroutines() == before+2
	})
	f.svc.Close()
	if n, held := holderGoroutines(), f.svc.Held(); n != before || held != 0 {
		t.Fatalf("after Close: %d holder goroutines (was %d), %d held", n, before, held)
	}
}
