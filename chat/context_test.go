package chat_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/safety"
)

// The model sees the profile's allowed fields (never the display name or
// the user id) and the session's last 10 messages.
func TestModelContext(t *testing.T) {
	t.Parallel()
	bodies := make(chan []byte, 64)
	f := newFixture(t, options{capture: bodies})
	const user = "user-7f3a9c"
	sid := ""
	for i := range 7 {
		body := map[string]any{"message": fmt.Sprint("hello number ", i)}
		if sid != "" {
			body["session_id"] = sid
		}
		sid = sessionOf(f.post(t, call{user: user, body: body}))
	}
	var last []byte
	for len(bodies) > 0 {
		last = <-bodies
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(last, &req); err != nil {
		t.Fatal(err)
	}
	// system, the last 10 of the 12 earlier messages, the new one.
	if len(req.Messages) != 12 || req.Messages[0].Role != "system" {
		t.Fatalf("%d messages: %+v", len(req.Messages), req.Messages)
	}
	// Each user message is wrapped and marked as data (DESIGN §12).
	if got := req.Messages[1].Content; got != safety.WrapUserText("hello number 1") {
		t.Errorf("oldest in view %q", got)
	}
	if got := req.Messages[11].Content; got != safety.WrapUserText("hello number 6") {
		t.Errorf("newest %q", got)
	}
	system := req.Messages[0].Content
	if !strings.Contains(system, safety.DataNotice) {
		t.Errorf("the instructions do not say user text is data: %q", system)
	}
	if !strings.Contains(system, `diet: "vegetarian"`) {
		t.Errorf("profile missing from %q", system)
	}
	if raw := string(last); strings.Contains(raw, "Secretname") || strings.Contains(raw, user) {
		t.Errorf("the model saw the display name or the user id: %s", raw)
	}
}
