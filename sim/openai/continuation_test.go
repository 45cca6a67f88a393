package openai_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// post sends a chat body and returns the status and the decoded answer.
func postChat(t *testing.T, url string, body map[string]any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return resp.StatusCode, out
}

func continueBody(extra map[string]any) map[string]any {
	b := map[string]any{"model": "gpt-4o-mini", "messages": []map[string]any{
		{"role": "user", "content": "what should I eat?"},
		{"role": "assistant", "content": "Oats with ber"}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func answerText(out map[string]any) string {
	ch, _ := out["choices"].([]any)
	if len(ch) == 0 {
		return ""
	}
	msg, _ := ch[0].(map[string]any)["message"].(map[string]any)
	s, _ := msg["content"].(string)
	return s
}

// OpenAI's API refuses vLLM's continuation parameters as unknown; a
// simulator set to act as an OpenAI-compatible server that takes them
// (chat.continue_final_message) continues the trailing assistant message
// without repeating it, refuses both flags true, and without the flag
// answers anew, as Chat Completions does.
func TestChatContinueFinalMessage(t *testing.T) {
	t.Parallel()
	script := sim.Script{Text: "Oats with berries make a good breakfast."}
	_, openaiTS := simtest.NewServer(t, sim.Config{Script: script})
	status, out := postChat(t, openaiTS.URL, continueBody(map[string]any{"continue_final_message": true, "add_generation_prompt": false}))
	if status != http.StatusBadRequest {
		t.Errorf("OpenAI's surface took continue_final_message: %d %v", status, out)
	}

	_, vllm := simtest.NewServer(t, sim.Config{Script: script, Chat: sim.Chat{ContinueFinalMessage: true}})
	status, out = postChat(t, vllm.URL, continueBody(map[string]any{"continue_final_message": true, "add_generation_prompt": false}))
	if want := "ries make a good breakfast."; status != http.StatusOK || answerText(out) != want {
		t.Errorf("continued: %d %q, want %q", status, answerText(out), want)
	}
	status, _ = postChat(t, vllm.URL, continueBody(map[string]any{"continue_final_message": true}))
	if status != http.StatusBadRequest {
		t.Errorf("continue_final_message with the default add_generation_prompt: %d, want 400", status)
	}
	status, out = postChat(t, vllm.URL, continueBody(nil))
	if want := "Oats with berries make a good breakfast."; status != http.StatusOK || answerText(out) != want {
		t.Errorf("without the flag: %d %q, want a new answer %q", status, answerText(out), want)
	}
}
