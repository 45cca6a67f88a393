package realtime

import (
	"encoding/json"
	"fmt"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// checkSession refuses a session object (from client_secrets, a call's
// session part or session.update) the way the real API does: by parameter,
// with param naming the field. A property the GA schema does not define is
// refused (unknown_parameter).
func checkSession(m map[string]any, param string) *core.APIError {
	typ, ok := m["type"]
	switch {
	case !ok:
		return core.ErrMissingParam(param + ".type")
	case typ == "transcription":
		return core.ErrInvalidValue(param+".type", "Invalid value: 'transcription'. The simulator supports only 'realtime' sessions.")
	case typ != "realtime":
		return core.ErrInvalidValue(param+".type", fmt.Sprintf("Invalid value: %s. Supported values are: 'realtime' and 'transcription'.", quoteJSON(typ)))
	}
	if err := CheckFields(m, sessionFields(), param); err != nil {
		return err
	}
	for _, k := range []string{"model", "instructions"} {
		if err := wantType[string](m, k, param); err != nil {
			return err
		}
	}
	if err := checkModalities(m, param); err != nil {
		return err
	}
	if err := checkSessionTools(m, param); err != nil {
		return err
	}
	if raw, ok := m["tool_choice"]; ok {
		b, _ := json.Marshal(raw)
		if _, err := parseRealtimeToolChoice(b); err != nil {
			return core.ErrInvalidValue(param+".tool_choice", "Invalid value for 'tool_choice': "+err.Error())
		}
	}
	if err := checkMaxOutput(m, param); err != nil {
		return err
	}
	return checkAudio(m, param)
}

// checkResponseParams checks response.create's parameters.
func checkResponseParams(m map[string]any) *core.APIError {
	if err := CheckFields(m, responseFields(), "response"); err != nil {
		return err
	}
	return checkMaxOutput(m, "response")
}

func checkMaxOutput(m map[string]any, param string) *core.APIError {
	if v, ok := m["max_output_tokens"]; ok && v != "inf" {
		n, isNum := v.(float64)
		if !isNum || n != float64(int(n)) || n < 1 || n > 4096 {
			return core.ErrInvalidValue(param+".max_output_tokens", "Invalid 'max_output_tokens': expected an integer between 1 and 4096, or 'inf'.")
		}
	}
	return nil
}

func checkModalities(m map[string]any, param string) *core.APIError {
	raw, ok := m["output_modalities"]
	if !ok {
		return nil
	}
	list, isList := raw.([]any)
	if !isList {
		return core.ErrInvalidType(param+".output_modalities", "an array", KindOf(raw))
	}
	if len(list) != 1 || (list[0] != "audio" && list[0] != "text") {
		return core.ErrInvalidValue(param+".output_modalities", "Invalid 'output_modalities': expected exactly one of 'audio' or 'text'.")
	}
	return nil
}

func checkSessionTools(m map[string]any, param string) *core.APIError {
	raw, ok := m["tools"]
	if !ok {
		return nil
	}
	list, isList := raw.([]any)
	if !isList {
		return core.ErrInvalidType(param+".tools", "an array", KindOf(raw))
	}
	for i, t := range list {
		p := fmt.Sprintf("%s.tools[%d]", param, i)
		tool, isObj := t.(map[string]any)
		if !isObj {
			return core.ErrInvalidType(p, "an object", KindOf(t))
		}
		if tool["type"] != "function" {
			return core.ErrInvalidValue(p+".type", fmt.Sprintf("Invalid value: %s. The simulator supports only 'function' tools.", quoteJSON(tool["type"])))
		}
		name, _ := tool["name"].(string)
		if name == "" {
			return core.ErrMissingParam(p + ".name")
		}
		if !openai.ToolNamePattern.MatchString(name) {
			return core.ErrInvalidValue(p+".name", fmt.Sprintf("Invalid '%s.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", p))
		}
		if err := wantType[map[string]any](tool, "parameters", p); err != nil {
			return err
		}
	}
	return nil
}

func checkAudio(m map[string]any, param string) *core.APIError {
	if err := wantType[map[string]any](m, "audio", param); err != nil {
		return err
	}
	audio, _ := m["audio"].(map[string]any)
	for _, dir := range []string{"input", "output"} {
		if err := wantType[map[string]any](audio, dir, param+".audio"); err != nil {
			return err
		}
	}
	in, _ := audio["input"].(map[string]any)
	out, _ := audio["output"].(map[string]any)
	if err := wantType[string](out, "voice", param+".audio.output"); err != nil {
		return err
	}
	for _, k := range []string{"transcription", "turn_detection", "noise_reduction"} {
		if v, ok := in[k]; ok && v != nil {
			if err := wantType[map[string]any](in, k, param+".audio.input"); err != nil {
				return err
			}
		}
	}
	if td, ok := in["turn_detection"].(map[string]any); ok {
		if t := td["type"]; t != "server_vad" && t != "semantic_vad" {
			return core.ErrInvalidValue(param+".audio.input.turn_detection.type", fmt.Sprintf("Invalid value: %s. Supported values are: 'server_vad' and 'semantic_vad'.", quoteJSON(t)))
		}
	}
	return nil
}

// wantType checks that m[key], when present, has Go type T once decoded.
func wantType[T any](m map[string]any, key, param string) *core.APIError {
	v, ok := m[key]
	if !ok {
		return nil
	}
	if _, isT := v.(T); isT {
		return nil
	}
	want := "a string"
	var zero T
	if _, isMap := any(zero).(map[string]any); isMap {
		want = "an object"
	}
	return core.ErrInvalidType(param+"."+key, want, KindOf(v))
}

// KindOf names the JSON type of a decoded value for error messages.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

func quoteJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil || v == nil {
		return "null"
	}
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return string(b)
}
