package sim

import (
	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/sim/realtime"
)

// The Realtime API lives in sim/realtime; these names keep its
// configuration, counters, endpoints and WebRTC helpers where configs and
// tests find them.
type (
	// Realtime configures the Realtime endpoints (realtime.Config).
	Realtime = realtime.Config
	// CallStats are one call's counters (realtime.CallStats).
	CallStats = realtime.CallStats
)

// Endpoint names of the Realtime API in faults and stats.
const (
	EndpointRealtimeClientSecrets = realtime.EndpointRealtimeClientSecrets
	EndpointRealtimeCalls         = realtime.EndpointRealtimeCalls
	EndpointRealtimeHangup        = realtime.EndpointRealtimeHangup
	EndpointRealtime              = realtime.EndpointRealtime
)

// Audio modes of Realtime.Audio.
const (
	AudioEcho    = realtime.AudioEcho
	AudioSilence = realtime.AudioSilence
)

// Transports a Realtime event travels on, as fault paths name them.
const (
	PathDataChannel = realtime.PathDataChannel
	PathSideband    = realtime.PathSideband
	PathWebSocket   = realtime.PathWebSocket
)

// DataChannelLabel is the label of the events data channel.
const DataChannelLabel = realtime.DataChannelLabel

// The Realtime surface's own fault kinds.
const (
	FaultSidebandNotFound    = realtime.FaultSidebandNotFound
	FaultTranscriptionFailed = realtime.FaultTranscriptionFailed
	FaultResponseFailed      = realtime.FaultResponseFailed
)

// LoopbackSettingEngine keeps a peer's ICE on 127.0.0.1 over UDP4 with
// multicast DNS off (DESIGN §15).
func LoopbackSettingEngine() webrtc.SettingEngine { return realtime.LoopbackSettingEngine() }

// NewOpusAPI is a pion API with Opus registered, over se.
func NewOpusAPI(se webrtc.SettingEngine) (*webrtc.API, error) { return realtime.NewOpusAPI(se) }

// OpusCapability is the Opus codec the peers negotiate.
func OpusCapability() webrtc.RTPCodecCapability { return realtime.OpusCapability() }

// OpusSilence is one Opus frame of silence.
func OpusSilence() []byte { return realtime.OpusSilence() }
