package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/voxgate/voxgate/sim/openai"
)

// Config configures the GPT-Live surface (POST /v1/live/sessions and its
// sideband): what the simulated user says, when the voice model delegates,
// and how its session clock runs.
type Config struct {
	// Said is what the user says, one utterance per turn, in order (and
	// round again). Empty means realtime.heard.
	Said []string `yaml:"said" json:"said,omitempty"`
	// TurnPackets is how many of the phone's RTP packets (20 ms each) make
	// one user turn. Zero means 50, about one second.
	TurnPackets int `yaml:"turn_packets" json:"turn_packets,omitempty"`
	// Rules decide, turn by turn, whether the voice model answers itself or
	// delegates. The first whose When matches what the user said applies;
	// none matching means a delegation.
	Rules []Rule `yaml:"rules" json:"rules,omitempty"`
	// Acknowledgement is what the model says when a delegation's
	// acknowledgement delay runs out. Empty means "One moment."
	Acknowledgement string `yaml:"acknowledgement" json:"acknowledgement,omitempty"`
	// WordMS is how long one word lasts on the session timeline, heard or
	// spoken. Zero means 300.
	WordMS int `yaml:"word_ms" json:"word_ms,omitempty"`
	// UsageInterval is how often, on the session clock, session.usage.updated
	// goes out. Zero means 5s.
	UsageInterval time.Duration `yaml:"usage_interval" json:"usage_interval,omitempty"`
	// ClockRate is how many session-clock milliseconds pass per real one:
	// tests run a long session quickly with 100. Zero means 1.
	ClockRate float64 `yaml:"clock_rate" json:"clock_rate,omitempty"`
	// MaxSession is how long, on the session clock, a session may last
	// before it closes with reason expired. Zero means 2 hours, the
	// lifetime an integrator measured (docs/sim.md).
	MaxSession time.Duration `yaml:"max_session" json:"max_session,omitempty"`
	// ConnectTimeout is how long, on the session clock, a created session
	// waits for the phone's media to connect before it closes with reason
	// connection_lost (billing its 15 s start charge). Zero means 30s.
	ConnectTimeout time.Duration `yaml:"connect_timeout" json:"connect_timeout,omitempty"`
	// ReflectAudio sends sidebands the copies of both audio streams the API
	// reflects (session.input_audio.append, session.output_audio.delta:
	// base64 PCM16 at 24 kHz, 100 ms each way every 100 ms, about 128 kB/s).
	// Off by default so that unit tests read only the events they assert on.
	ReflectAudio bool `yaml:"reflect_audio" json:"reflect_audio,omitempty"`
	// ContextTokens is the context window session.usage.updated reports a
	// ratio of. Zero means 32768.
	ContextTokens int `yaml:"context_tokens" json:"context_tokens,omitempty"`
}

// Rule is one scripted decision of the voice model.
type Rule struct {
	Name string `yaml:"name" json:"name,omitempty"`
	// When matches what the user said: contains, matches and model only.
	When  openai.When `yaml:"when" json:"when"`
	Reply Reply       `yaml:"reply" json:"reply"`
}

// Reply is what the voice model does with a turn a rule matched.
type Reply struct {
	// Text, when set, is spoken by the model itself: no delegation.
	Text string `yaml:"text" json:"text,omitempty"`
	// DelegationFirst sends session.delegation.created before the turn's
	// input transcript (the API promises no order between them).
	DelegationFirst bool `yaml:"delegation_first" json:"delegation_first,omitempty"`
}

// Live defaults.
const (
	defaultAcknowledgement = "One moment."
	// liveStartCharge is what creating a WebRTC session bills while it
	// initialises, credited against its duration once it runs.
	liveStartCharge = 15.0
)

func (l *Config) Validate() error {
	if l.TurnPackets < 0 || l.WordMS < 0 || l.UsageInterval < 0 || l.ClockRate < 0 || l.MaxSession < 0 ||
		l.ConnectTimeout < 0 || l.ContextTokens < 0 {
		return errors.New("turn_packets, word_ms, usage_interval, clock_rate, max_session, connect_timeout and context_tokens must not be negative")
	}
	for i, r := range l.Rules {
		if len(r.When.ToolsOffered) > 0 || r.When.ToolResults != nil || r.When.SystemMatches != "" {
			return fmt.Errorf("rules[%d] %q: when: a live rule matches what the user said (contains, matches, model)", i, r.Name)
		}
		if _, err := openai.CompileTextMatch(r.When); err != nil {
			return fmt.Errorf("rules[%d] %q: %w", i, r.Name, err)
		}
	}
	return nil
}

// withDefaults returns l with every zero field set to its default; heard is
// realtime.heard, the utterance when Said is empty.
func (l Config) withDefaults(heard string) Config {
	if len(l.Said) == 0 {
		l.Said = []string{heard}
	}
	if l.TurnPackets == 0 {
		l.TurnPackets = 50
	}
	if l.Acknowledgement == "" {
		l.Acknowledgement = defaultAcknowledgement
	}
	if l.WordMS == 0 {
		l.WordMS = 300
	}
	if l.UsageInterval == 0 {
		l.UsageInterval = 5 * time.Second
	}
	if l.ClockRate == 0 {
		l.ClockRate = 1
	}
	if l.MaxSession == 0 {
		l.MaxSession = 2 * time.Hour
	}
	if l.ConnectTimeout == 0 {
		l.ConnectTimeout = 30 * time.Second
	}
	if l.ContextTokens == 0 {
		l.ContextTokens = 32768
	}
	return l
}

// liveRule is a LiveRule compiled once at New.
type liveRule struct {
	text  openai.TextMatch
	model string
	reply Reply
}

func compileLiveRules(rules []Rule) []liveRule {
	out := make([]liveRule, 0, len(rules))
	for _, r := range rules {
		m, _ := openai.CompileTextMatch(r.When) // checked by validate
		out = append(out, liveRule{text: m, model: r.When.Model, reply: r.Reply})
	}
	return out
}

// decide is the voice model's choice for one turn: the first rule that
// matches, else a delegation.
func decide(rules []liveRule, model, said string) Reply {
	for _, r := range rules {
		if (r.model == "" || r.model == model) && r.text.Match(said) {
			return r.reply
		}
	}
	return Reply{}
}
