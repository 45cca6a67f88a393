package chat

import (
	"context"

	"github.com/voxgate/voxgate/agent"
)

// Status labels the app shows while a turn works (DESIGN §7).
const (
	labelThinking  = "Understanding your question…"
	labelSearching = "Looking up your data…"
)

// Progress shows the loop's phases as status events: thinking around a
// model call until its first text, searching around a response's tool
// calls.
func (t *turn) Progress(_ context.Context, p agent.Phase, done bool) error {
	kind, label := "thinking", labelThinking
	if p == agent.Working {
		kind, label = "searching", labelSearching
	}
	state := "start"
	if done {
		state = "complete"
	}
	return t.out.Send("status", map[string]string{"status": kind, "label": label, "state": state})
}
