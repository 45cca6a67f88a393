package realtime

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	"github.com/pion/webrtc/v4"
)

// NetworkParams are the relay's network settings, shared by every relayed
// session of a replica (DESIGN §6 relay, §15).
type NetworkParams struct {
	// UDPAddr, when set ("0.0.0.0:3478"), is the one UDP port every
	// session's ICE uses on both legs (pion's UDP mux), so a deployment
	// opens one port. Empty gives each leg its own port from PortMin–PortMax.
	UDPAddr string
	// UDPSockets, when more than 1, opens that many UDP ports from
	// UDPAddr's port up (each with its own pion UDP mux and reader), and
	// gives each new leg the next one in turn (phones' and the provider's
	// legs each spread over all of them). One reader serving
	// every session falls behind first when the cores are busy, and the
	// socket then drops packets (docs/voice.md, "Relay" benchmarks).
	// Several sockets on one port (SO_REUSEPORT) would not do: the kernel
	// picks the socket by the sender's address, and a pion mux knows only
	// the sessions given to it. 0 or 1: one port.
	UDPSockets int
	// TCPAddr, when set (":443"), listens for ICE over TCP: phones on
	// networks that block UDP reach the relay there (passive candidates).
	TCPAddr string
	// PublicIPs, when set, replace the host address in every candidate the
	// relay advertises to phones (NAT 1:1): a replica behind a 1:1 NAT must
	// never advertise its private address, which no phone can reach. The
	// provider leg keeps its own: the provider learns the NAT's address
	// from the relay's checks (peer-reflexive), as the relay starts them.
	PublicIPs []string
	// PortMin and PortMax bound the UDP ports a leg listens on when there
	// is no UDPAddr; both 0 lets the system choose.
	PortMin, PortMax uint16
	// TURN are the ICE servers handed to the phone with the answer (TURN
	// over TLS on 443 for the most closed networks). The relay itself needs
	// none: it is the phone's peer at a reachable address.
	TURN []webrtc.ICEServer
	// Loopback keeps every candidate on 127.0.0.1 over IPv4 with multicast
	// DNS off (tests, DESIGN §15); UDPAddr and TCPAddr must then be
	// loopback addresses too.
	Loopback bool
	// MaxMessageBytes is the largest data-channel message the relay
	// accepts on either leg, advertised as a=max-message-size; 0 means
	// DefaultMaxMessageBytes. pion closes a channel that receives more, so
	// a peer must be told.
	MaxMessageBytes uint32
	// DisconnectedTimeout and FailedTimeout are ICE's: a leg whose peer
	// stops answering consent checks is disconnected after the first and
	// failed after the second more (0: 10 s and 20 s). Tests shorten them.
	DisconnectedTimeout, FailedTimeout time.Duration
}

// DefaultMaxMessageBytes matches the sideband's largest event.
const DefaultMaxMessageBytes = 1 << 20

// Network holds the listeners every relayed session shares. Close it when
// the replica stops.
type Network struct {
	p       NetworkParams
	udp     []ice.UDPMux
	next    [2]atomic.Uint64 // the next provider [0] and phone [1] leg's UDP mux, in turn
	tcp     ice.TCPMux
	conns   []interface{ Close() error }
	log     logging.LoggerFactory
	reports reporter // every relayed call's RTCP reports
}

// NewNetwork opens the shared UDP and TCP listeners p names.
func NewNetwork(p NetworkParams) (*Network, error) {
	if p.PortMin > p.PortMax {
		return nil, fmt.Errorf("realtime: relay port range %d–%d is empty", p.PortMin, p.PortMax)
	}
	if p.UDPSockets < 0 || p.UDPSockets > 64 {
		return nil, fmt.Errorf("realtime: relay UDP sockets %d: want 0–64", p.UDPSockets)
	}
	if p.MaxMessageBytes == 0 {
		p.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if p.DisconnectedTimeout <= 0 {
		p.DisconnectedTimeout = 10 * time.Second
	}
	if p.FailedTimeout <= 0 {
		p.FailedTimeout = 20 * time.Second
	}
	n := &Network{p: p, log: logging.NewDefaultLoggerFactory()}
	logger := n.log.NewLogger("relay")
	if p.UDPAddr != "" {
		if err := n.listenUDP(logger); err != nil {
			_ = n.Close()
			return nil, err
		}
	}
	if p.TCPAddr != "" {
		l, err := net.Listen("tcp4", p.TCPAddr)
		if err != nil {
			_ = n.Close()
			return nil, fmt.Errorf("realtime: relay TCP %s: %w", p.TCPAddr, err)
		}
		n.conns = append(n.conns, l)
		n.tcp = webrtc.NewICETCPMux(logger, l, 64)
	}
	return n, nil
}

// udpReadBuffer is each shared socket's receive buffer: a burst that
// arrives while its reader waits for a core is held, not dropped (the
// system's net.core.rmem_max caps it).
const udpReadBuffer = 4 << 20

// listenUDP opens the shared UDP ports: UDPSockets of them from UDPAddr's
// port up (from ports the system picks when that port is 0).
func (n *Network) listenUDP(logger logging.LeveledLogger) error {
	host, port, err := net.SplitHostPort(n.p.UDPAddr)
	if err != nil {
		return fmt.Errorf("realtime: relay UDP %s: %w", n.p.UDPAddr, err)
	}
	first, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("realtime: relay UDP %s: %w", n.p.UDPAddr, err)
	}
	for i := range max(1, n.p.UDPSockets) {
		addr := net.JoinHostPort(host, strconv.Itoa(first+i))
		if first == 0 {
			addr = n.p.UDPAddr
		}
		conn, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return fmt.Errorf("realtime: relay UDP %s: %w", addr, err)
		}
		_ = conn.(*net.UDPConn).SetReadBuffer(udpReadBuffer)
		n.conns = append(n.conns, conn)
		n.udp = append(n.udp, webrtc.NewICEUDPMux(logger, conn))
	}
	return nil
}

// UDPAddr is the first shared UDP port's address (nil when off).
func (n *Network) UDPAddr() net.Addr {
	if len(n.udp) == 0 {
		return nil
	}
	return n.udp[0].GetListenAddresses()[0]
}

// TCPAddr is the ICE-TCP listener's address, nil when off.
func (n *Network) TCPAddr() net.Addr {
	if n.tcp == nil {
		return nil
	}
	return n.conns[len(n.conns)-1].(net.Listener).Addr()
}

// ICEServers are the servers a phone should use to reach the relay.
func (n *Network) ICEServers() []webrtc.ICEServer {
	return append([]webrtc.ICEServer(nil), n.p.TURN...)
}

// Close closes the shared listeners; sessions still open lose their media.
func (n *Network) Close() error {
	n.reports.close()
	var errs []error
	for _, m := range n.udp {
		errs = append(errs, m.Close())
	}
	if n.tcp != nil {
		errs = append(errs, n.tcp.Close())
	}
	for _, c := range n.conns {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// settings are one leg's pion settings. The phone leg gets ICE over TCP;
// the provider leg (OpenAI's WebRTC takes UDP only) does not.
func (n *Network) settings(phone bool) (webrtc.SettingEngine, error) {
	var se webrtc.SettingEngine
	se.LoggerFactory = n.log
	types := []webrtc.NetworkType{webrtc.NetworkTypeUDP4}
	if phone && n.tcp != nil {
		types = append(types, webrtc.NetworkTypeTCP4)
		se.SetICETCPMux(n.tcp)
	}
	se.SetNetworkTypes(types)
	if len(n.udp) > 0 {
		kind := 0
		if phone {
			kind = 1
		}
		se.SetICEUDPMux(n.udp[(n.next[kind].Add(1)-1)%uint64(len(n.udp))])
	} else if n.p.PortMax != 0 {
		if err := se.SetEphemeralUDPPortRange(n.p.PortMin, n.p.PortMax); err != nil {
			return se, err
		}
	}
	if n.p.Loopback {
		se.SetIncludeLoopbackCandidate(true)
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() && ip.To4() != nil })
		se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	}
	if len(n.p.PublicIPs) > 0 && phone {
		err := se.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{External: n.p.PublicIPs,
			AsCandidateType: webrtc.ICECandidateTypeHost, Mode: webrtc.ICEAddressRewriteReplace})
		if err != nil {
			return se, err
		}
	}
	// A consent check every 2 s. RFC 7675 asks for one every 5 s, but pion's
	// agent wakes at least every 2 s and checks the selected pair each time
	// it wakes (ice v4.4), so a longer keepalive would say 5 s and do 2:
	// this is most of what a held call costs (docs/voice.md, "Relay").
	// Shorter timeouts (tests) check at least twice within the first.
	se.SetICETimeouts(n.p.DisconnectedTimeout, n.p.FailedTimeout, min(2*time.Second, n.p.DisconnectedTimeout/2))
	se.SetSCTPMaxMessageSize(n.p.MaxMessageBytes)
	// The readers start at negotiation, not at the first packet, so a leg
	// that never sends is detected like one that stops.
	se.SetFireOnTrackBeforeFirstRTP(true)
	return se, nil
}
