package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Voice is the voice section (DESIGN §6), handed as it is to package
// controlplane, which checks the values against its tools and prices.
// DefaultVoice holds every default: the file is decoded over it, so a key
// left out keeps its default and a key given is taken as written (0 and ""
// included).
type Voice struct {
	Mode               string        `yaml:"mode"`
	Model              string        `yaml:"model"`
	Voice              string        `yaml:"voice"`
	Voices             []string      `yaml:"voices"`
	Instructions       string        `yaml:"instructions"`
	TranscriptionModel string        `yaml:"transcription_model"` // "" turns transcription off
	SecretTTL          time.Duration `yaml:"secret_ttl"`
	ToolCallsPerMinute int           `yaml:"tool_calls_per_minute"`
	SweepInterval      time.Duration `yaml:"sweep_interval"`
	IdleTimeout        time.Duration `yaml:"idle_timeout"`     // sideband: end a call whose socket is silent this long
	VADIdleTimeout     time.Duration `yaml:"vad_idle_timeout"` // sideband: server VAD's idle timeout; 0 turns it off
	// ContextTool is what the file says of voice.context_tool ("" for
	// none), nil when it says nothing; read it through Config.ContextTool,
	// which voice and chat share.
	ContextTool *string `yaml:"context_tool"`
	// ContextCacheTTL keeps each user's context-tool profile this long in
	// each replica, for voice and chat alike; 0 (the default) runs the
	// tool for every turn and session.
	ContextCacheTTL time.Duration `yaml:"context_cache_ttl"`
	// UsageCeilings overrides the per-second bounds on a direct-mode app's
	// reported usage, by class (text_in, transcription.audio_ms, …), over
	// the control plane's defaults (docs/voice.md).
	UsageCeilings map[string]int64 `yaml:"usage_ceilings"`
	// Live is mode live's (GPT-Live) own settings.
	Live LiveVoice `yaml:"live"`
	// Relay is the media relay's network (relay mode, docs/voice.md).
	Relay VoiceRelay `yaml:"relay"`

	// Not in the file: fixed in production, shortened by tests.

	// Provider names the provider on cost records.
	Provider string `yaml:"-"`
	// AttachWithin is how long the sideband keeps retrying a call the
	// provider does not know yet.
	AttachWithin time.Duration `yaml:"-"`
	// LeaseTTL is how long a replica's hold on its calls outlives its last
	// renewal; LeaseRenew how often it renews (and looks for calls to
	// adopt). A dead holder's calls are adopted within TTL + Renew.
	LeaseTTL   time.Duration `yaml:"-"`
	LeaseRenew time.Duration `yaml:"-"`
}

// LiveVoice is the voice.live section: the GPT-Live model, how long the
// voice waits before saying "one moment" about a delegation, how long the
// gateway gives a delegation before it tells the voice it could not be
// done, and the instructions of the backend model that runs it.
type LiveVoice struct {
	Model                string        `yaml:"model"`
	AcknowledgementDelay time.Duration `yaml:"acknowledgement_delay"`
	DelegationDeadline   time.Duration `yaml:"delegation_deadline"`
	// BackendInstructions open a delegation's system message, the
	// session's instructions (voice.instructions with the profile) after
	// them: as chat.instructions are chat's and voice.instructions the
	// voice model's, they are the app's, not the gateway's.
	BackendInstructions string `yaml:"backend_instructions"`
}

// VoiceRelay is voice.relay: the network every relayed session of a
// replica shares (realtime.NetworkParams). The zero value opens no shared
// port: each leg takes its own from the system.
type VoiceRelay struct {
	// UDPAddr is the one UDP port of every session's ICE ("0.0.0.0:3478").
	UDPAddr string `yaml:"udp_addr"`
	// UDPSockets opens that many UDP ports from udp_addr's up, one reader
	// each, legs taking them in turn (0 or 1: the one port).
	UDPSockets int `yaml:"udp_sockets"`
	// TCPAddr is ICE over TCP for phones without UDP (":443").
	TCPAddr string `yaml:"tcp_addr"`
	// PublicIPs replace the host address in the phone's candidates (NAT 1:1).
	PublicIPs []string `yaml:"public_ips"`
	// PortMin and PortMax bound each leg's UDP port when UDPAddr is empty.
	PortMin uint16 `yaml:"port_min"`
	PortMax uint16 `yaml:"port_max"`
	// TURN servers handed to phones with the session. Their credential is
	// a secret, so it comes from VOXGATE_TURN_CREDENTIAL, never the file.
	TURN []TURNServer `yaml:"turn"`
	// Loopback keeps every candidate on 127.0.0.1 (voxgate dev, tests).
	Loopback bool `yaml:"loopback"`
}

// TURNServer is one ICE server for phones: urls like
// "turns:turn.example.com:443?transport=tcp" and the username.
type TURNServer struct {
	URLs     []string `yaml:"urls"`
	Username string   `yaml:"username"`
}

// DefaultVoice is the voice section of a file that has none. The models
// are current ones with no announced shutdown (docs/voice.md).
func DefaultVoice() Voice {
	return Voice{
		Mode: "direct", Model: "gpt-realtime-2.1", Voice: "marin",
		Instructions: "You are a friendly voice assistant for a food and wellness app. " +
			"Keep answers short and spoken. Use the tools to look things up; never give medical advice.",
		TranscriptionModel: "gpt-live-transcribe",
		SecretTTL:          60 * time.Second, ToolCallsPerMinute: 60, SweepInterval: 15 * time.Second,
		IdleTimeout: 45 * time.Second, VADIdleTimeout: 15 * time.Second,
		Live: LiveVoice{Model: "gpt-live-1.1", AcknowledgementDelay: 400 * time.Millisecond, DelegationDeadline: 20 * time.Second,
			BackendInstructions: "You are the backend of a voice assistant for a food and wellness app. The voice model talks with " +
				"the user and has handed you the user's latest request. Read the conversation, use the tools to do what was asked, " +
				"and answer in a few short spoken sentences for the voice to say. Never give medical advice."},
		Provider: "openai", AttachWithin: 5 * time.Second, LeaseTTL: 3 * time.Second, LeaseRenew: time.Second,
	}
}

// demoContextTool is the demo's profile tool (package tools/demo).
const demoContextTool = "get_profile"

// ContextTool is the tool whose result is the user's profile, for voice
// and chat alike (DESIGN §7), or "" for none: voice.context_tool when the
// file sets it, else the demo's get_profile while the demo is on. It is
// read when the services are built, after every override of the demo
// switch.
func (c *Config) ContextTool() string {
	switch {
	case c.Voice.ContextTool != nil:
		return *c.Voice.ContextTool
	case c.Demo.Enabled:
		return demoContextTool
	}
	return ""
}

// Prices is the price table override (DESIGN §10): when set, it replaces
// the embedded prices.yaml whole, in the same shape. Package billing reads
// and checks it; config keeps it as the YAML it was given.
type Prices struct {
	node *yaml.Node
}

// UnmarshalYAML keeps the section as it is written.
func (p *Prices) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: prices must be a mapping with version and models", n.Line)
	}
	p.node = n
	return nil
}

// YAML is the override as a document, or nil when the file sets none.
func (p Prices) YAML() ([]byte, error) {
	if p.node == nil {
		return nil, nil
	}
	return yaml.Marshal(p.node)
}
