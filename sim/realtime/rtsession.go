package realtime

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// sessionConfig is a Realtime session object kept as decoded JSON, so every
// field a client sets is echoed back in session.created/updated exactly as
// the real API does, including fields the simulator does not act on.
type sessionConfig map[string]any

// newSessionConfig is the default session the real API reports in
// session.created (see the spec's example), with the simulator's model and
// instructions.
func newSessionConfig(rt *Config) sessionConfig {
	pcm := func() map[string]any { return map[string]any{"type": "audio/pcm", "rate": 24000} }
	return sessionConfig{
		"type":              "realtime",
		"object":            "realtime.session",
		"id":                "sess_" + core.RandomID(),
		"model":             rt.Model,
		"output_modalities": []any{"audio"},
		"instructions":      rt.Instructions,
		"tools":             []any{},
		"tool_choice":       "auto",
		"max_output_tokens": "inf",
		"tracing":           nil,
		"truncation":        "auto",
		"prompt":            nil,
		"expires_at":        0,
		"audio": map[string]any{
			"input": map[string]any{
				"format":          pcm(),
				"transcription":   nil,
				"noise_reduction": nil,
				"turn_detection": map[string]any{
					"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300,
					"silence_duration_ms": 200, "idle_timeout_ms": nil,
					"create_response": true, "interrupt_response": true,
				},
			},
			"output": map[string]any{"format": pcm(), "voice": "alloy", "speed": 1},
		},
		"include": nil,
	}
}

// apply merges a client's (already checked) session object into c: objects
// merge key by key, anything else replaces, as session.update does. The
// server's own fields (id, object, expires_at) are not in the GA request
// schema, so a checked update cannot carry them. Empty instructions are
// replaced by the default ones, as the API does: a client that compares
// the instructions it set with the session's must not compare what it
// left empty.
func (c sessionConfig) apply(update map[string]any, rt *Config) {
	mergeJSON(c, update)
	if s, ok := c["instructions"].(string); !ok || s == "" {
		c["instructions"] = rt.Instructions
	}
}

func mergeJSON(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if have, ok := dst[k].(map[string]any); ok {
				have = maps.Clone(have)
				mergeJSON(have, sub)
				dst[k] = have
				continue
			}
		}
		dst[k] = v
	}
}

// clone copies c deeply enough that later merges do not alias it.
func (c sessionConfig) clone() sessionConfig {
	b, _ := json.Marshal(c) // decoded JSON always re-encodes
	var out sessionConfig
	_ = json.Unmarshal(b, &out)
	return out
}

// started stamps a session that a connection is about to use.
func (c sessionConfig) started(now time.Time, lifetime time.Duration) {
	c["id"] = "sess_" + core.RandomID()
	c["expires_at"] = now.Add(lifetime).Unix()
}

// sessionView is what the simulator acts on, read out of a sessionConfig.
type sessionView struct {
	model, instructions, voice string
	tools                      []openai.ChatTool
	choice                     openai.ToolChoice
	textOnly                   bool
	transcribe                 bool
	transcribeModel            string
	vad, createResponse        bool
	interrupt                  bool
	silenceMS                  int // server VAD's silence_duration_ms
	idleMS                     int // server VAD's idle_timeout_ms; 0 when unset
}

func (c sessionConfig) view() sessionView {
	v := sessionView{choice: openai.ToolChoice{Mode: "auto"}}
	v.model, _ = c["model"].(string)
	v.instructions, _ = c["instructions"].(string)
	if mods, ok := c["output_modalities"].([]any); ok && len(mods) == 1 && mods[0] == "text" {
		v.textOnly = true
	}
	v.tools = sessionTools(c["tools"])
	if raw, err := json.Marshal(c["tool_choice"]); err == nil {
		if ch, err := parseRealtimeToolChoice(raw); err == nil && ch.Mode != "" {
			v.choice = ch
		}
	}
	if len(v.tools) == 0 {
		v.choice = openai.ToolChoice{Mode: "none"}
	}
	audio, _ := c["audio"].(map[string]any)
	in, _ := audio["input"].(map[string]any)
	out, _ := audio["output"].(map[string]any)
	v.voice, _ = out["voice"].(string)
	if tr, ok := in["transcription"].(map[string]any); ok && tr != nil {
		v.transcribe = true
		v.transcribeModel, _ = tr["model"].(string)
	}
	if td, ok := in["turn_detection"].(map[string]any); ok {
		v.vad = true
		v.createResponse = td["create_response"] != false
		v.interrupt = td["interrupt_response"] != false
		v.silenceMS = 200 // the API's default, and semantic VAD's stand-in
		if ms, ok := td["silence_duration_ms"].(float64); ok && ms >= 0 {
			v.silenceMS = int(ms)
		}
		if ms, ok := td["idle_timeout_ms"].(float64); ok && ms > 0 && td["type"] == "server_vad" {
			v.idleMS = int(ms)
		}
	}
	return v
}

// sessionTools converts the session's function tools to the chat shape the
// script understands; the realtime shape is flat ({type, name, ...}).
func sessionTools(raw any) []openai.ChatTool {
	list, _ := raw.([]any)
	var out []openai.ChatTool
	for _, t := range list {
		m, _ := t.(map[string]any)
		if m["type"] != "function" {
			continue
		}
		var ct openai.ChatTool
		ct.Type = "function"
		ct.Function.Name, _ = m["name"].(string)
		ct.Function.Description, _ = m["description"].(string)
		if p, ok := m["parameters"]; ok && p != nil {
			ct.Function.Parameters, _ = json.Marshal(p)
		}
		out = append(out, ct)
	}
	return out
}

// parseRealtimeToolChoice reads "auto"/"none"/"required" or the realtime
// {"type":"function","name":…} form (flat, unlike chat's).
func parseRealtimeToolChoice(raw json.RawMessage) (openai.ToolChoice, error) {
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &named); err != nil {
			return openai.ToolChoice{}, err
		}
		if named.Type != "function" || named.Name == "" {
			return openai.ToolChoice{}, fmt.Errorf("want {\"type\":\"function\",\"name\":…}")
		}
		return openai.ToolChoice{Mode: "function", Name: named.Name}, nil
	}
	return openai.ParseToolChoice(raw)
}

// checkVoice refuses a session.update that changes the voice once the
// model has spoken: the API fixes it at the first audio.
func (ss *rtSession) checkVoice(update map[string]any) *core.APIError {
	audio, _ := update["audio"].(map[string]any)
	out, _ := audio["output"].(map[string]any)
	voice, ok := out["voice"]
	if !ok || !ss.spoke {
		return nil
	}
	haveAudio, _ := ss.cfg["audio"].(map[string]any)
	haveOut, _ := haveAudio["output"].(map[string]any)
	if quoteJSON(voice) == quoteJSON(haveOut["voice"]) {
		return nil
	}
	return &core.APIError{Type: "invalid_request_error", Code: "cannot_update_voice", Param: "session.audio.output.voice",
		Message: "Cannot update a conversation's voice if assistant audio is present."}
}
