package chat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/safety"
)

// The provider sees the user only as the salted hash voice sends too: the
// request's safety_identifier, never the user id.
func TestChatSendsTheSafetyIdentifier(t *testing.T) {
	t.Parallel()
	ids := safety.NewIdentifiers([]byte("test-key"))
	bodies := make(chan []byte, 16)
	f := newFixture(t, options{capture: bodies, safetyIDs: ids})
	const user = "user-5b1e07"
	f.post(t, call{user: user, body: map[string]any{"message": "hello"}})
	if len(bodies) == 0 {
		t.Fatal("the provider got no request")
	}
	for len(bodies) > 0 {
		body := <-bodies
		var req struct {
			SafetyIdentifier string `json:"safety_identifier"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if want := ids.For(user); req.SafetyIdentifier != want || strings.Contains(string(body), user) {
			t.Errorf("got safety_identifier %q, want %q and no user id in the body", req.SafetyIdentifier, want)
		}
	}
}
