package realtime

import (
	"fmt"
	"time"

	"github.com/voxgate/voxgate/sim/openai"
)

// Config configures the Realtime API surface: what the simulated voice
// model hears, how long it speaks and what its audio track sends. Replies
// themselves come from sim.Config.Script, shared with Chat Completions, so one
// script drives voice and text alike.
type Config struct {
	// Audio is what the call's audio track sends: "echo" (default) returns
	// every RTP packet the caller sends; "silence" sends Opus silence while
	// the model speaks, and nothing otherwise.
	Audio string `yaml:"audio" json:"audio,omitempty"`
	// TurnPackets is how many caller RTP packets (20 ms each) make a user turn
	// when server VAD is on. Zero means 50, about one second.
	TurnPackets int `yaml:"turn_packets" json:"turn_packets,omitempty"`
	// BargeInPackets is how many packets (20 ms each) of audio the
	// simulated user listens to while the model answers before speaking
	// over it: a barge-in, which interrupt_response acts on. Zero means the
	// user waits until the reply has been generated and has played.
	BargeInPackets int `yaml:"barge_in_packets" json:"barge_in_packets,omitempty"`
	// Heard is what the model "hears" in an audio turn: the input
	// transcription and the user message that scripts match. The simulator
	// does not decode Opus. Empty means "Find me a pasta recipe".
	Heard string `yaml:"heard" json:"heard,omitempty"`
	// ReplyAudioMS is how long each spoken reply lasts. Zero means 1000.
	ReplyAudioMS int `yaml:"reply_audio_ms" json:"reply_audio_ms,omitempty"`
	// GenerationMS is how long a response generates: response.done follows
	// response.created after this long, while a spoken reply may still be
	// playing. Zero means a quarter of ReplyAudioMS (the API generates audio
	// faster than real time).
	GenerationMS int `yaml:"generation_ms" json:"generation_ms,omitempty"`
	// DeltaBytes is the size of each transcript or arguments delta. Zero
	// means 16.
	DeltaBytes int `yaml:"delta_bytes" json:"delta_bytes,omitempty"`
	// Model is the model of sessions that name none. Empty means gpt-realtime.
	Model string `yaml:"model" json:"model,omitempty"`
	// Instructions are the default session instructions.
	Instructions string `yaml:"instructions" json:"instructions,omitempty"`
	// MaxSession is how long a session may last: then it gets the
	// session_expired error event and its sockets close with 1001 (its call
	// ends). Zero means 60 minutes, the API's cap.
	MaxSession time.Duration `yaml:"max_session" json:"max_session,omitempty"`
	// CloseSidebandWithPeer closes a call's sideband sockets when its peer
	// closes or fails. By default they stay open, as is reported of the API:
	// the phone leaving ends the call without telling the sideband, so a
	// gateway must learn that the call ended some other way, and the session
	// lasts until its last sideband closes (or MaxSession).
	CloseSidebandWithPeer bool `yaml:"close_sideband_with_peer" json:"close_sideband_with_peer,omitempty"`
	// SidebandSessionCreated sends session.created to a sideband socket
	// when it attaches, as every other transport gets. Off by default: a
	// sideband is reported to get no session.created, so a gateway must
	// send its config without waiting for one.
	SidebandSessionCreated bool `yaml:"sideband_session_created" json:"sideband_session_created,omitempty"`
	// TranscriptAfterResponse holds an input transcription until the
	// response its turn started is done, instead of sending it right after
	// the commit: the API transcribes asynchronously, so it may arrive on
	// either side of the response events and a gateway must cope with both.
	TranscriptAfterResponse bool `yaml:"transcript_after_response" json:"transcript_after_response,omitempty"`
	// LaxAuth accepts either kind of key on every Realtime route. By default
	// (strict) the sideband and hangup take a standard API key only, and an
	// application/sdp offer to /v1/realtime/calls a client secret only, so a
	// gateway that sends the wrong kind fails here as it would in production.
	LaxAuth bool `yaml:"lax_auth" json:"lax_auth,omitempty"`
}

// Audio modes of Realtime.Audio.
const (
	AudioEcho    = "echo"
	AudioSilence = "silence"
)

const (
	defaultHeard        = "Find me a pasta recipe"
	defaultInstructions = "You are a helpful, witty, and friendly AI. You should always call a function if you can."
	// maxSession is how long a Realtime session may last: the API's cap.
	maxSession = time.Hour
)

func (r *Config) Validate() error {
	switch r.Audio {
	case "", AudioEcho, AudioSilence:
	default:
		return fmt.Errorf("audio: want %q or %q, got %q", AudioEcho, AudioSilence, r.Audio)
	}
	if r.TurnPackets < 0 || r.ReplyAudioMS < 0 || r.DeltaBytes < 0 || r.GenerationMS < 0 || r.MaxSession < 0 || r.BargeInPackets < 0 {
		return fmt.Errorf("turn_packets, barge_in_packets, reply_audio_ms, generation_ms, delta_bytes and max_session must not be negative")
	}
	return nil
}

// withDefaults returns r with every zero field set to its default.
func (r Config) withDefaults() Config {
	if r.Audio == "" {
		r.Audio = AudioEcho
	}
	if r.TurnPackets == 0 {
		r.TurnPackets = 50
	}
	if r.Heard == "" {
		r.Heard = defaultHeard
	}
	if r.ReplyAudioMS == 0 {
		r.ReplyAudioMS = 1000
	}
	if r.GenerationMS == 0 {
		r.GenerationMS = r.ReplyAudioMS / 4
	}
	if r.DeltaBytes == 0 {
		r.DeltaBytes = 16
	}
	if r.Model == "" {
		r.Model = openai.DefaultRealtimeModel
	}
	if r.Instructions == "" {
		r.Instructions = defaultInstructions
	}
	if r.MaxSession == 0 {
		r.MaxSession = maxSession
	}
	return r
}
