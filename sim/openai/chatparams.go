package openai

import (
	"encoding/json"
	"slices"

	"github.com/voxgate/voxgate/sim/core"
)

// chatParams are the properties of the spec's CreateChatCompletionRequest
// (with those of CreateModelResponseProperties, which it includes). The
// real API refuses any other top-level name, so a gateway that forwards a
// misspelt or Responses-only parameter fails here as it would there.
// TestChatParamsMatchSpec keeps the list in step with the spec.
var chatParams = map[string]bool{
	"audio": true, "frequency_penalty": true, "function_call": true, "functions": true,
	"logit_bias": true, "logprobs": true, "max_completion_tokens": true, "max_tokens": true,
	"messages": true, "metadata": true, "modalities": true, "model": true, "moderation": true,
	"n": true, "parallel_tool_calls": true, "prediction": true, "presence_penalty": true,
	"prompt_cache_key": true, "prompt_cache_options": true, "prompt_cache_retention": true,
	"reasoning_effort": true, "response_format": true, "safety_identifier": true, "seed": true,
	"service_tier": true, "stop": true, "store": true, "stream": true, "stream_options": true,
	"temperature": true, "tool_choice": true, "tools": true, "top_logprobs": true, "top_p": true,
	"user": true, "verbosity": true, "web_search_options": true,
}

// anyValue skips a JSON value without keeping it: only the names of the
// request's members are needed.
type anyValue struct{}

func (*anyValue) UnmarshalJSON([]byte) error { return nil }

// checkParams refuses top-level names the spec does not list, with the
// real API's unknown_parameter error. Names match exactly: "Model" is not
// "model", though encoding/json would accept it.
func checkParams(body []byte) error {
	var members map[string]anyValue
	if err := json.Unmarshal(body, &members); err != nil {
		return core.JSONError(err, "")
	}
	var unknown []string
	for name := range members {
		if !chatParams[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return core.ErrUnknownParams(unknown)
}
