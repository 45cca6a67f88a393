package chat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
)

// panicking passes the real provider's streams through and panics at the
// given event of each, as a bug in a provider adapter would.
type panicking struct {
	llm.Provider
	at int
}

func (p panicking) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s, err := p.Provider.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &panicStream{Stream: s, left: p.at}, nil
}

type panicStream struct {
	llm.Stream
	left int
}

func (s *panicStream) Next(ctx context.Context) (llm.Event, error) {
	if s.left == 0 {
		panic("test: the provider stream panicked")
	}
	s.left--
	return s.Stream.Next(ctx)
}

// A panic after the stream began ends it with one error event: every line
// on the wire is still an event line, there is no done, and the usage of
// the model call that was made is recorded and the ticket settled.
func TestPanicAfterStreamBegan(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{provider: func(p llm.Provider) llm.Provider { return panicking{Provider: p, at: 12} }}) // after the story's first sentence
	resp := f.do(t, context.Background(), call{user: "u1", body: map[string]any{"message": "tell me a story"}})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200 (the stream had begun)", resp.StatusCode)
	}
	var types []string
	var last map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "", strings.HasPrefix(line, "id: "), strings.HasPrefix(line, ": "):
		case strings.HasPrefix(line, "event: "):
			types = append(types, strings.TrimPrefix(line, "event: "))
		case strings.HasPrefix(line, "data: "):
			last = nil
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &last); err != nil {
				t.Fatalf("data line is not JSON: %q", line)
			}
		default:
			t.Fatalf("a line that is not part of an event reached the stream: %q", line)
		}
	}
	if len(types) < 3 || types[0] != "session" || !slices.Contains(types, "content") {
		t.Fatalf("events %v: want session and content before the failure", types)
	}
	if types[len(types)-1] != "error" || slices.Contains(types, "done") || slices.Contains(types, "stream_complete") {
		t.Fatalf("events %v: want the stream to end with one error event and no done", types)
	}
	if last["code"] != "INTERNAL" {
		t.Errorf("error event %v: want code INTERNAL", last)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u1' AND kind = 'chat'`); n != 1 {
		t.Errorf("%d usage records, want 1 (a model call was made)", n)
	}
	if n := f.count(t, `SELECT count(*) FROM quota_tickets WHERE user_id = 'u1'`); n != 0 {
		t.Errorf("%d quota tickets left, want 0 (settled)", n)
	}
}
