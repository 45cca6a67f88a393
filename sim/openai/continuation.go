package openai

import (
	"encoding/json"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
)

// Continued is ans as a model gives it when asked to continue prefill, its
// own partial reply (a trailing assistant message): the text after prefill
// when the planned answer begins with it, else the whole planned text
// (which then follows the prefill); the tool calls as planned. The answer
// continues the text, it never repeats it, as a model that takes a prefill
// does (docs/sim.md, "Continuing a partial answer").
func Continued(ans Answer, prefill string) Answer {
	if rest, ok := strings.CutPrefix(ans.Text, prefill); ok {
		ans.Text = rest
	}
	return ans
}

// PrefillOf reports a request that ends with an assistant message, and that
// message's text: the reply so far a model is asked to continue.
func PrefillOf(req *ChatRequest) (string, bool) {
	n := len(req.Msgs)
	if n == 0 || req.Msgs[n-1].Role != "assistant" || len(req.Msgs[n-1].ToolCalls) > 0 {
		return "", false
	}
	return req.Msgs[n-1].Text, true
}

// PlanContinued is the script's answer to req when it ends with a partial
// reply to continue: planned on the conversation before that reply (the
// rules match the user's turn, not the model's own words), then continued.
func (cs *CompiledScript) PlanContinued(req *ChatRequest, prefill string) Answer {
	before := *req
	before.Msgs = req.Msgs[:len(req.Msgs)-1]
	return Continued(cs.Plan(&before), prefill)
}

// takeContinue reads vLLM's continuation parameters off body when the
// server acts as an OpenAI-compatible server that takes them
// (Chat.ContinueFinalMessage), and returns body without them, so the rest
// is checked as the API checks it. OpenAI's own API refuses both names as
// unknown parameters, so without the setting body is left to be refused.
func (cs *ChatState) takeContinue(body []byte) ([]byte, bool, error) {
	if !cs.continueFinal {
		return body, false, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return body, false, nil // decodeChatRequest names what is wrong
	}
	_, hasCont := members["continue_final_message"]
	_, hasGen := members["add_generation_prompt"]
	if !hasCont && !hasGen {
		return body, false, nil
	}
	cont, gen := false, true // vLLM's defaults
	for name, v := range map[string]*bool{"continue_final_message": &cont, "add_generation_prompt": &gen} {
		if raw, ok := members[name]; ok && json.Unmarshal(raw, v) != nil {
			return nil, false, core.ErrInvalidValue(name, "Input should be a valid boolean")
		}
		delete(members, name)
	}
	if cont && gen {
		return nil, false, core.ErrInvalidRequest("", "Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
	}
	out, err := json.Marshal(members)
	return out, cont, err
}
