package realtime

import (
	"fmt"
	"net"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// LoopbackSettingEngine returns pion settings that keep every ICE candidate
// on 127.0.0.1 over UDP4 with multicast DNS off and no STUN/TURN: tests
// (the simulator's peers, their callers and the gateway's peers in test
// configs) must never send a packet off the machine (DESIGN §15).
func LoopbackSettingEngine() webrtc.SettingEngine {
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() && ip.To4() != nil })
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	return se
}

// NewOpusAPI builds a pion API that negotiates Opus audio only, with the
// given settings. It registers no interceptors (NACK, RTCP reports, TWCC),
// where pion's NewAPI would register its defaults: the simulator does not
// adapt its bitrate, skipping them keeps a call cheap enough for one machine
// to hold 100+, and its SDP answers then advertise no transport-cc feedback
// the simulator would never send.
func NewOpusAPI(se webrtc.SettingEngine) (*webrtc.API, error) {
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: OpusCapability(), PayloadType: 111},
		webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("sim: register opus: %w", err)
	}
	return webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(se),
		webrtc.WithInterceptorRegistry(&interceptor.Registry{})), nil
}

// OpusCapability is the codec the Realtime API negotiates: Opus at 48 kHz,
// stereo signalling, 20 ms frames.
func OpusCapability() webrtc.RTPCodecCapability {
	return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: 48000, Channels: 2,
		SDPFmtpLine: "minptime=10;useinbandfec=1"}
}

// OpusSilence returns one 20 ms Opus frame of silence (TOC 0xf8: CELT
// fullband 20 ms, mono, one frame; then the two-byte silent payload). A fresh
// slice each call, so callers may hand it to pion, which keeps it.
func OpusSilence() []byte { return []byte{0xf8, 0xff, 0xfe} }

// Audio timing shared by the peer and the token counts: Opus frames of 20 ms,
// so 50 RTP packets are one second of audio.
const (
	PacketMS        = 20
	opusTicksPerPkt = 48000 * PacketMS / 1000
)
