package realtime

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
)

// The GA Realtime API refuses any property its schemas do not define, so a
// client still sending the beta shapes ("modalities", "voice" and
// "input_audio_format" at the top of a session, …) is told so at once. The
// sets below are the properties of the GA request schemas in the official
// spec; TestRealtimeFieldSetsMatchSpec derives them from the spec and
// compares.

// FieldSet lists the properties an object may carry, each with the set its
// own object value may carry; nil leaves the value unchecked (free-form
// objects such as tool parameters and metadata, and scalars). The "[]" entry
// is the set of each element of an array value.
type FieldSet map[string]FieldSet

func Leaves(names ...string) FieldSet {
	s := make(FieldSet, len(names))
	for _, n := range names {
		s[n] = nil
	}
	return s
}

// with returns s plus the given entries.
func (s FieldSet) with(entries FieldSet) FieldSet {
	for k, v := range entries {
		s[k] = v
	}
	return s
}

func realtimeToolFields() FieldSet {
	filter := Leaves("tool_names", "read_only")
	return FieldSet{"[]": Leaves("type", "name", "description", "parameters", "server_label", "server_url",
		"connector_id", "tunnel_id", "authorization", "server_description", "headers", "allowed_callers",
		"defer_loading").with(FieldSet{
		"allowed_tools":    filter,
		"require_approval": {"always": filter, "never": Leaves("tool_names", "read_only")},
	})}
}

// outputAudioFields is audio.output without speed, as response.create has it.
func outputAudioFields() FieldSet {
	return FieldSet{"format": Leaves("type", "rate"), "voice": Leaves("id")}
}

// sessionFields is RealtimeSessionCreateRequestGA.
func sessionFields() FieldSet {
	return Leaves("type", "output_modalities", "model", "instructions", "include", "parallel_tool_calls",
		"max_output_tokens").with(FieldSet{
		"audio": {
			"input": {
				"format":          Leaves("type", "rate"),
				"transcription":   Leaves("model", "language", "languages", "keywords", "prompt", "delay"),
				"noise_reduction": Leaves("type"),
				"turn_detection": Leaves("type", "threshold", "prefix_padding_ms", "silence_duration_ms",
					"create_response", "interrupt_response", "idle_timeout_ms", "eagerness"),
			},
			"output": outputAudioFields().with(Leaves("speed")),
		},
		"tracing":     Leaves("workflow_name", "group_id", "metadata"),
		"tools":       realtimeToolFields(),
		"tool_choice": Leaves("type", "name", "server_label"),
		"reasoning":   Leaves("effort"),
		"truncation":  Leaves("type", "retention_ratio").with(FieldSet{"token_limits": Leaves("post_instructions")}),
		"prompt":      Leaves("id", "version", "variables"),
	})
}

// responseFields is RealtimeResponseCreateParams.
func responseFields() FieldSet {
	return Leaves("output_modalities", "instructions", "parallel_tool_calls", "max_output_tokens", "conversation",
		"metadata").with(FieldSet{
		"audio":       {"output": outputAudioFields()},
		"tools":       realtimeToolFields(),
		"tool_choice": Leaves("type", "name", "server_label"),
		"reasoning":   Leaves("effort"),
		"prompt":      Leaves("id", "version", "variables"),
		"input": {"[]": Leaves("id", "object", "type", "status", "role", "call_id", "name", "arguments", "output",
			"approval_request_id", "approve", "reason", "server_label").with(FieldSet{
			"content": {"[]": Leaves("type", "text", "audio", "transcript", "image_url", "detail")},
			"tools":   {"[]": Leaves("name", "description", "input_schema", "annotations")},
			"error":   Leaves("type", "code", "message"),
		})},
	})
}

// clientSecretFields is RealtimeCreateClientSecretRequest with a realtime
// session (transcription sessions are refused by type first).
func clientSecretFields() FieldSet {
	return FieldSet{"expires_after": Leaves("anchor", "seconds"), "session": sessionFields()}
}

// CheckFields refuses the first property of v that set does not define,
// naming its path from param, as the API's unknown_parameter error does.
// Keys are visited in sorted order, so the error is deterministic.
func CheckFields(v any, set FieldSet, param string) *core.APIError {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub, ok := set[k]
			p := k
			if param != "" {
				p = param + "." + k
			}
			if !ok {
				return errUnknownParam(p)
			}
			if sub != nil {
				if err := CheckFields(v[k], sub, p); err != nil {
					return err
				}
			}
		}
	case []any:
		if elem, ok := set["[]"]; ok && elem != nil {
			for i, e := range v {
				if err := CheckFields(e, elem, fmt.Sprintf("%s[%d]", param, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func errUnknownParam(param string) *core.APIError {
	return &core.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: "unknown_parameter",
		Message: fmt.Sprintf("Unknown parameter: '%s'.", param)}
}

// betaHeader is how a client asks for the beta interface, which the GA API
// refuses.
const betaHeader = "OpenAI-Beta"

// wantsBeta reports a request carrying OpenAI-Beta: realtime=v1.
func wantsBeta(r *http.Request) bool {
	for _, v := range r.Header.Values(betaHeader) {
		for p := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(p) == "realtime=v1" {
				return true
			}
		}
	}
	return false
}

func errBetaShape() *core.APIError {
	return &core.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "beta_api_shape_disabled",
		Message: "The beta Realtime API shape is not supported for this model. Remove the 'OpenAI-Beta: realtime=v1' header to use the GA interface."}
}
