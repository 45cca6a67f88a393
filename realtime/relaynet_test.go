package realtime_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The candidates the relay gives a phone carry the configured public
// address (NAT 1:1), over UDP and TCP, never the private one; the phone
// is told the TURN servers. (The answer is not applied: no packet goes to
// the documentation address.)
func TestRelayAdvertisesPublicAddress(t *testing.T) {
	t.Parallel()
	turn := webrtc.ICEServer{URLs: []string{"turns:turn.example.net:443?transport=tcp"}, Username: "u", Credential: "p"}
	e := newRelayEnv(t, relayOpts{net: realtime.NetworkParams{TCPAddr: "127.0.0.1:0", PublicIPs: []string{"203.0.113.7"},
		TURN: []webrtc.ICEServer{turn}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	answer, err := e.relay.Answer(ctx, p.offer(t))
	if err != nil {
		t.Fatal(err)
	}
	var udp, tcp int
	for _, line := range strings.Split(answer, "\n") {
		if !strings.HasPrefix(line, "a=candidate:") {
			continue
		}
		f := strings.Fields(line)
		if f[4] != "203.0.113.7" {
			t.Fatalf("candidate %q: want the public address", line)
		}
		switch strings.ToLower(f[2]) {
		case "udp":
			udp++
		case "tcp":
			tcp++
		}
	}
	if udp == 0 || tcp == 0 {
		t.Fatalf("answer has %d UDP and %d TCP candidates, want both:\n%s", udp, tcp, answer)
	}
	if got := e.relay.ICEServers(); len(got) != 1 || got[0].URLs[0] != turn.URLs[0] {
		t.Fatalf("ICE servers %+v, want the TURN server", got)
	}
}

// Without the shared UDP port, each leg listens on a port of the
// configured range, and the call flows.
func TestRelayPortRange(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{noMux: true, net: realtime.NetworkParams{PortMin: 41000, PortMax: 41999}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	answer, err := e.relay.Answer(ctx, p.offer(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(answer, "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, "a=candidate:") && strings.EqualFold(f[2], "udp") {
			port, _ := strconv.Atoi(f[5])
			if port < 41000 || port > 41999 {
				t.Fatalf("candidate %q outside the port range", line)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no UDP candidate in\n%s", answer)
	}
	p.accept(t, answer, false)
	go p.stream(ctx)
	checkContinuous(t, p.waitHeard(ctx, t, 25), nil)
}

// With several shared UDP sockets, legs take them in turn: two calls'
// phone legs answer on different ports, and both carry audio.
func TestRelaySeveralUDPSockets(t *testing.T) {
	t.Parallel()
	n := newNetwork(t, realtime.NetworkParams{UDPAddr: "127.0.0.1:0", UDPSockets: 2}, false)
	s, c := newClient(t, sim.Config{Latency: simtest.ZeroLatency()}, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ports := map[string]bool{}
	for range 2 {
		e := newRelayEnvWith(t, s, c, relayOpts{shared: n})
		p := newPhone(t, phoneOpts{})
		answer, err := e.relay.Answer(ctx, p.offer(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(answer, "\n") {
			if f := strings.Fields(line); strings.HasPrefix(line, "a=candidate:") && strings.EqualFold(f[2], "udp") {
				ports[f[5]] = true
			}
		}
		p.accept(t, answer, false)
		go p.stream(ctx)
		checkContinuous(t, p.waitHeard(ctx, t, 25), nil)
	}
	if len(ports) != 2 {
		t.Fatalf("the phones were answered on ports %v, want two", ports)
	}
}

// A socket count outside 0–64 is refused before anything listens.
func TestRelayUDPSocketsBounds(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1, 65} {
		if _, err := realtime.NewNetwork(realtime.NetworkParams{UDPAddr: "127.0.0.1:0", UDPSockets: n, Loopback: true}); err == nil {
			t.Fatalf("UDPSockets %d accepted", n)
		}
	}
}
