package realtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/realtime"
	"github.com/openai/openai-go/v3/responses"
)

// MaxSecretTTL bounds a client secret's life (DESIGN §6): long enough for a
// phone to place its call, short enough that a leaked secret is soon
// useless. The API's own minimum is 10 s.
const (
	MaxSecretTTL = 60 * time.Second
	MinSecretTTL = 10 * time.Second
)

// DefaultTimeout bounds one mint, retries included.
const DefaultTimeout = 10 * time.Second

// Params configure a Client.
type Params struct {
	// BaseURL is the API base, e.g. https://api.openai.com/v1 (OPENAI_BASE_URL).
	BaseURL string
	// APIKey is the server's standard key (OPENAI_API_KEY). It never leaves
	// the gateway.
	APIKey string
	// HTTPClient, when set, carries the requests (tests, proxies).
	HTTPClient *http.Client
	// Timeout bounds one mint; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how often a transient failure is retried; the default
	// 1 retries once, as the router does (DESIGN §11), and only when the
	// provider's wait fits the deadline.
	MaxRetries *int
}

// Client talks to the Realtime API.
type Client struct {
	oai     openai.Client
	baseURL string
	http    *http.Client
	timeout time.Duration
	retries int
}

// New checks p and builds a Client.
func New(p Params) (*Client, error) {
	if p.BaseURL == "" || p.APIKey == "" {
		return nil, errors.New("realtime: BaseURL and APIKey are required")
	}
	if !strings.HasPrefix(p.BaseURL, "https://") && !strings.HasPrefix(p.BaseURL, "http://") {
		return nil, fmt.Errorf("realtime: base URL %q is not http(s)", p.BaseURL)
	}
	base := strings.TrimRight(p.BaseURL, "/")
	retries := 1
	if p.MaxRetries != nil {
		retries = *p.MaxRetries
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base + "/"),
		option.WithAPIKey(p.APIKey),
		option.WithMaxRetries(0), // Client.do retries, within the deadline
	}
	if p.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(p.HTTPClient))
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hc := p.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{oai: openai.NewClient(opts...), baseURL: base, http: hc, timeout: timeout, retries: max(retries, 0)}, nil
}

// CallsURL is where a phone posts its SDP offer with a client secret: the
// configured base plus /realtime/calls, absolute.
func (c *Client) CallsURL() string { return c.baseURL + "/realtime/calls" }

// Tool is a function the model may call, as data.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// Session is the whole config a client secret carries, so the phone needs
// to send none of its own.
type Session struct {
	Model        string
	Voice        string
	Instructions string
	Tools        []Tool
	// ToolChoice is auto, none or required; empty means auto.
	ToolChoice string
	// TranscriptionModel turns on input transcription; empty leaves it off.
	TranscriptionModel string
	// Language is the user's language as ISO-639-1, a transcription hint.
	Language string
	// IdleTimeout, when set (5 s to 30 s), turns on server VAD's
	// idle_timeout_ms: a connected call whose user is silent that long
	// gets input_audio_buffer.timeout_triggered and a response, so a held
	// call always produces an event within it while the phone is there.
	IdleTimeout time.Duration `json:",omitempty"`
	// SafetyIdentifier is the salted hash of the user (safety.Identifiers),
	// sent as the OpenAI-Safety-Identifier header when the session's
	// credentials or call are created; "" sends none. Never the user id.
	SafetyIdentifier string
}

// Secret is a minted client secret.
type Secret struct {
	Value     string
	ExpiresAt time.Time
	// Model is the session's model as the provider reports it.
	Model string
}

// mint creates a client secret for s that expires after ttl (clamped to
// [MinSecretTTL, MaxSecretTTL]). Failures are *apierr.Error with an AI_*
// code (see normalize).
func (c *Client) mint(ctx context.Context, s Session, ttl time.Duration) (Secret, error) {
	ttl = min(max(ttl, MinSecretTTL), MaxSecretTTL)
	var res *realtime.ClientSecretNewResponse
	err := c.do(ctx, "mint a client secret", func(ctx context.Context) (err error) {
		res, err = c.oai.Realtime.ClientSecrets.New(ctx, realtime.ClientSecretNewParams{
			ExpiresAfter: realtime.ClientSecretNewParamsExpiresAfter{Anchor: "created_at", Seconds: openai.Int(int64(ttl / time.Second))},
			Session:      realtime.ClientSecretNewParamsSessionUnion{OfRealtime: s.param()},
		}, s.identity()...)
		return err
	})
	if err != nil {
		return Secret{}, err
	}
	if res.Value == "" || res.ExpiresAt <= 0 {
		return Secret{}, parseError("mint a client secret", errors.New("response without value or expires_at"))
	}
	model := s.Model
	if m := res.Session.AsRealtime().Model; m != "" {
		model = string(m)
	}
	return Secret{Value: res.Value, ExpiresAt: time.Unix(res.ExpiresAt, 0).UTC(), Model: model}, nil
}

// identity is the request option that names the user to the provider, as
// its safety identifier header (the Realtime form of chat's
// safety_identifier).
func (s Session) identity() []option.RequestOption {
	if s.SafetyIdentifier == "" {
		return nil
	}
	return []option.RequestOption{option.WithHeader("OpenAI-Safety-Identifier", s.SafetyIdentifier)}
}

func (s Session) param() *realtime.RealtimeSessionCreateRequestParam {
	p := &realtime.RealtimeSessionCreateRequestParam{
		Model: realtime.RealtimeSessionCreateRequestModel(s.Model),
	}
	if s.Instructions != "" {
		p.Instructions = openai.String(s.Instructions)
	}
	if s.Voice != "" {
		p.Audio.Output.Voice = realtime.RealtimeAudioConfigOutputVoiceUnionParam{OfRealtimeAudioConfigOutputVoiceString2: openai.String(s.Voice)}
	}
	if s.TranscriptionModel != "" {
		p.Audio.Input.Transcription = realtime.AudioTranscriptionParam{Model: realtime.AudioTranscriptionModel(s.TranscriptionModel)}
		if s.Language != "" {
			p.Audio.Input.Transcription.Language = openai.String(s.Language)
		}
	}
	if s.IdleTimeout > 0 {
		p.Audio.Input.TurnDetection = realtime.RealtimeAudioInputTurnDetectionUnionParam{OfServerVad: &realtime.RealtimeAudioInputTurnDetectionServerVadParam{
			IdleTimeoutMs: openai.Int(s.IdleTimeout.Milliseconds())}}
	}
	for _, t := range s.Tools {
		p.Tools = append(p.Tools, realtime.RealtimeToolsConfigUnionParam{OfFunction: &realtime.RealtimeFunctionToolParam{
			Type: realtime.RealtimeFunctionToolTypeFunction, Name: openai.String(t.Name),
			Description: openai.String(t.Description), Parameters: t.Parameters,
		}})
	}
	if len(s.Tools) > 0 {
		choice := s.ToolChoice
		if choice == "" {
			choice = "auto"
		}
		p.ToolChoice = realtime.RealtimeToolChoiceConfigUnionParam{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptions(choice))}
	}
	return p
}
