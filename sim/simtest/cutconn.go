package simtest

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim"
)

// CutConn is a loopback UDP socket whose network can vanish: after Cut,
// every packet to or from it is dropped without a word, as when a phone
// leaves Wi-Fi coverage. Its peer sees no DTLS close, only silence, and
// must find out through ICE's consent checks.
type CutConn struct {
	*net.UDPConn
	cut atomic.Bool
}

// NewCutConn listens on 127.0.0.1 and closes when the test ends.
func NewCutConn(tb testing.TB) *CutConn {
	tb.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return &CutConn{UDPConn: c}
}

// Cut drops every packet from now on.
func (c *CutConn) Cut() { c.cut.Store(true) }

// ReadFrom skips what arrives after the cut.
func (c *CutConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.UDPConn.ReadFrom(b)
		if err != nil || !c.cut.Load() {
			return n, addr, err
		}
	}
}

// WriteTo pretends to send after the cut.
func (c *CutConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if c.cut.Load() {
		return len(b), nil
	}
	return c.UDPConn.WriteTo(b, addr)
}

// SettingEngine is the loopback settings with every ICE packet through c.
func (c *CutConn) SettingEngine() webrtc.SettingEngine {
	se := sim.LoopbackSettingEngine()
	se.SetICEUDPMux(ice.NewUDPMuxDefault(ice.UDPMuxParams{UDPConn: c}))
	return se
}
