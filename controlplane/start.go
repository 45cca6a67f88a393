package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/tools"
)

// StartRequest is the body of POST /v1/voice/sessions.
type StartRequest struct {
	Mode          string `json:"mode"`
	ChatSessionID string `json:"chat_session_id"`
	Voice         string `json:"voice"`
	Language      string `json:"language"`
	Replace       bool   `json:"replace"`
	// Key is the optional Idempotency-Key header (quota.RequestKey), which
	// keys the start's reservation: a retry after a lost reservation reply
	// goes on as the first attempt's session, counted once; one sent while
	// that start holds the key is 409.
	Key string `json:"-"`
}

// StartResponse is the 201 body of DESIGN §6.
type StartResponse struct {
	SessionID    string           `json:"session_id"`
	Mode         string           `json:"mode"`
	Model        string           `json:"model"`
	Voice        string           `json:"voice"`
	MaxDurationS int64            `json:"max_duration_s"`
	Tools        []ToolInfo       `json:"tools"`
	Quota        quota.VoiceQuota `json:"quota"`
	ClientSecret *ClientSecret    `json:"client_secret,omitempty"`
	RealtimeURL  string           `json:"realtime_url,omitempty"`
	SDPURL       string           `json:"sdp_url,omitempty"`
	// ICEServers are a relayed session's TURN servers (relaystart.go).
	ICEServers []ICEServer `json:"ice_servers,omitempty"`
	// Instructions are a direct session's, as minted into its secret: the
	// phone reads them in the call's session.created anyway, and a client
	// that sends its own session.update (OpenAI's Agents SDK does, on
	// connect) needs them to keep the user's profile. Held modes keep
	// them on the server.
	Instructions string `json:"instructions,omitempty"`
}

// ToolInfo is a tool as the app sees it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ClientSecret is a direct-mode session's credential for the provider.
type ClientSecret struct {
	Value     string    `json:"value"`
	ExpiresAt time.Time `json:"expires_at"`
}

var (
	voiceRE    = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
	languageRE = regexp.MustCompile(`^[a-z]{2}$`)
)

func (s *Service) checkStart(req *StartRequest) error {
	switch req.Mode {
	case "":
		req.Mode = s.cfg.Mode
	case ModeDirect, ModeSideband:
	case ModeLive:
		if s.backend == nil {
			return apierr.New(apierr.InvalidRequest, "mode live is not available on this gateway (it needs a chat route for its delegations and a price for its model).")
		}
	case ModeRelay:
		if s.relayNet == nil {
			return apierr.Errorf(apierr.InvalidRequest, "mode %s is not available on this gateway; use direct or sideband.", req.Mode)
		}
	default:
		return apierr.New(apierr.InvalidRequest, "mode must be direct, sideband, relay or live.")
	}
	if req.Voice == "" {
		req.Voice = s.cfg.Voice
	}
	if !voiceRE.MatchString(req.Voice) || (len(s.cfg.Voices) > 0 && !slices.Contains(s.cfg.Voices, req.Voice)) {
		return apierr.New(apierr.InvalidRequest, "That voice is not available.")
	}
	if req.Language != "" && !languageRE.MatchString(req.Language) {
		return apierr.New(apierr.InvalidRequest, "language must be a two-letter ISO 639-1 code, like en.")
	}
	if req.ChatSessionID != "" && (len(req.ChatSessionID) > 128 || !auth.ValidSubject(req.ChatSessionID)) {
		return apierr.New(apierr.InvalidRequest, "chat_session_id is not valid.")
	}
	return nil
}

// Start begins a voice session for p: quota (one request, seconds
// reserved), the user's context, the provider's credentials, then the
// session row. Whatever fails after the reservation gives its seconds back,
// and no row is left half-made.
func (s *Service) Start(ctx context.Context, p auth.Principal, req StartRequest) (StartResponse, error) {
	if err := s.checkStart(&req); err != nil {
		return StartResponse{}, err
	}
	if req.ChatSessionID != "" {
		if err := s.checkChatLink(ctx, p.UserID, req.ChatSessionID); err != nil {
			return StartResponse{}, err
		}
	}
	id := randid.New("vs_", 12)
	res, err := s.reserve(ctx, p, id, req.Replace, req.Key)
	if err != nil {
		return StartResponse{}, err
	}
	id = res.SessionID // a keyed retry's is its first attempt's
	giveBack := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := s.quota.SettleVoice(ctx, p.UserID, id, 0); err != nil {
			s.log.WarnContext(ctx, "voice reservation not given back", "session_id", id, "err", err)
		}
	}
	profile, language := s.profileContext(ctx, p, id, res.Plan)
	if req.Language == "" {
		// The app named none: the profile's is the session's, as it is a
		// chat turn's, so what the model says, its tool calls and a Live
		// delegation's answer are screened in it (docs/safety.md).
		req.Language = language
	}
	toolList := s.tools.Registry().ForPlan(res.Plan, true)
	sess := realtime.Session{
		Model: s.cfg.Model, Voice: req.Voice, Tools: realtimeTools(toolList),
		Instructions:       s.cfg.Instructions + profile,
		TranscriptionModel: s.cfg.TranscriptionModel, Language: req.Language,
		SafetyIdentifier: s.safetyID.For(p.UserID),
	}
	out := StartResponse{
		SessionID: id, Mode: req.Mode, Model: s.cfg.Model, Voice: req.Voice, MaxDurationS: res.Seconds,
		Tools: toolInfos(toolList), Quota: res.Quota,
	}
	// Direct mode hands the app a secret carrying the config; sideband
	// keeps the config for the call the gateway places with the app's
	// offer, and the app gets only where to post it.
	var config []byte
	model, transcription := s.cfg.Model, s.cfg.TranscriptionModel
	if req.Mode == ModeLive {
		// No secret and no tools in the config: the voice delegates every
		// task to the gateway (livestart.go).
		model, transcription, config = s.liveConfig(sess)
		out.Model, out.SDPURL = model, "/v1/voice/sessions/"+id+"/sdp"
	} else if req.Mode == ModeDirect {
		began := time.Now()
		secret, err := s.rt.Mint(ctx, sess, s.cfg.SecretTTL)
		s.metrics.mint.Observe(time.Since(began).Seconds())
		if err != nil {
			giveBack()
			return StartResponse{}, err
		}
		out.ClientSecret = &ClientSecret{Value: secret.Value, ExpiresAt: secret.ExpiresAt}
		out.RealtimeURL, out.Instructions = s.rt.CallsURL(), sess.Instructions
	} else {
		sess.IdleTimeout = s.cfg.VADIdleTimeout // the gateway learns of a departed phone from the silence
		config, _ = json.Marshal(sess)          // plain data: strings and decoded JSON schemas
		out.SDPURL = "/v1/voice/sessions/" + id + "/sdp"
		if req.Mode == ModeRelay {
			out.ICEServers = s.relayICEServers()
		}
	}
	var chatID *string
	if req.ChatSessionID != "" {
		chatID = &req.ChatSessionID
	}
	// The start's span is the session's trace: whoever works on the
	// session later, on any replica, continues it (tracing.go).
	traceStart(ctx, id, req.Mode, model, s.cfg.Provider)
	_, err = s.pool.Exec(ctx, `INSERT INTO voice_sessions
		(id, user_id, mode, plan, provider, model, voice, language, transcription_model, chat_session_id, max_duration_s, expires_at, config, trace_parent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::bigint, now() + make_interval(secs => $11::bigint), $12, $13)`,
		id, p.UserID, req.Mode, res.Plan, s.cfg.Provider, model, req.Voice, req.Language, transcription,
		chatID, res.Seconds, config, traceParent(ctx))
	if err != nil {
		giveBack()
		return StartResponse{}, database.Error("controlplane: insert session", err)
	}
	s.metrics.started.WithLabelValues(req.Mode).Inc()
	return out, nil
}

// reserve takes the session's seconds. With replace, an active session in
// the way is ended first (end_reason replaced, charged up to now) and the
// reservation tried once more.
func (s *Service) reserve(ctx context.Context, p auth.Principal, id string, replace bool, key string) (*quota.VoiceReservation, error) {
	res, err := s.quota.ReserveVoiceKeyed(ctx, p, id, key)
	var active *quota.ActiveSessionError
	if err == nil || !replace || !errors.As(err, &active) {
		return res, err
	}
	_, _, err = s.end(ctx, p.UserID, active.SessionID, EndRequest{Reason: ReasonReplaced})
	if apierr.CodeOf(err) == apierr.NotFound {
		// A reservation with no session row: a start that died between the
		// two. Nothing was used; give it back.
		_, err = s.quota.SettleVoice(ctx, p.UserID, active.SessionID, 0)
	}
	if err != nil {
		return nil, err
	}
	return s.quota.ReserveVoiceKeyed(ctx, p, id, key)
}

func realtimeTools(ts []*tools.Tool) []realtime.Tool {
	out := make([]realtime.Tool, 0, len(ts))
	for _, t := range ts {
		var params map[string]any
		_ = json.Unmarshal(t.Parameters, &params) // the registry checked it at load
		out = append(out, realtime.Tool{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out
}

func toolInfos(ts []*tools.Tool) []ToolInfo {
	out := make([]ToolInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, ToolInfo{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// profileContext runs the configured context tool and renders the allowed
// profile fields for the instructions; language is the profile's language
// as a two-letter code ("es-MX" is "es"), "" when it names none. A context
// tool that fails or times out is logged and the session goes on without
// it.
func (s *Service) profileContext(ctx context.Context, p auth.Principal, sessionID, plan string) (block, language string) {
	prof, err := s.tools.ContextProfile(ctx, tools.Call{
		SessionID: sessionID, SessionKind: tools.KindVoice, CallID: "context",
		Name: s.contextTool, Principal: p, Plan: plan,
	})
	if err != nil {
		s.log.WarnContext(ctx, "voice context tool failed; starting without a profile", "tool", s.contextTool, "err", err)
	}
	language, _, _ = strings.Cut(strings.ToLower(strings.TrimSpace(prof.Language)), "-")
	language, _, _ = strings.Cut(language, "_")
	if !languageRE.MatchString(language) {
		language = ""
	}
	return prof.Block, language
}
