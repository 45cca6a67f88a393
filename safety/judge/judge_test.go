package judge

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
)

// scripted is a provider that answers every call with one text after a
// delay, and records the requests: the judge's own logic under test, not
// a provider's (the chat tests run it through the simulator).
type scripted struct {
	answer string
	delay  time.Duration
	reqs   []llm.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s.reqs = append(s.reqs, req)
	return &stream{s: s, start: time.Now()}, nil
}

type stream struct {
	s     *scripted
	start time.Time
	step  int
}

func (st *stream) Next(ctx context.Context) (llm.Event, error) {
	st.step++
	switch st.step {
	case 1:
		select {
		case <-time.After(st.s.delay):
		case <-ctx.Done():
			return llm.Event{}, &llm.Error{Code: llm.ProviderTimeout, Err: ctx.Err()}
		}
		return llm.Event{Kind: llm.EventText, Text: st.s.answer}, nil
	case 2:
		return llm.Event{Kind: llm.EventDone, Usage: &llm.Usage{Model: "judge-model", InputTokens: 200, OutputTokens: 2}}, nil
	}
	return llm.Event{}, io.EOF
}

func (st *stream) Close() error { return nil }

func TestJudgeAnswers(t *testing.T) {
	t.Parallel()
	var _ safety.Judge = (*Judge)(nil)
	for _, c := range []struct {
		answer    string
		claim, ok bool
	}{
		{"CLAIM", true, true},
		{" claim.", true, true},
		{"OK", false, true},
		{"**OK**", false, true},
		{"Ok, this sentence is fine", false, true},
		{"I cannot help with that.", false, false},
		{"", false, false},
	} {
		p := &scripted{answer: c.answer}
		j := New(context.Background(), p, Config{Route: "judge"})
		claim, ok := j.Judge("Turmeric cures arthritis.", "en")
		if claim != c.claim || ok != c.ok {
			t.Errorf("answer %q: claim %v ok %v, want %v %v", c.answer, claim, ok, c.claim, c.ok)
		}
		if len(p.reqs) != 1 || p.reqs[0].Model != "judge" || p.reqs[0].Messages[1].Content != "Language: en\nSentence: Turmeric cures arthritis." {
			t.Fatalf("requests = %+v", p.reqs)
		}
		if u := j.Usage(); len(u) != 1 || u[0].InputTokens != 200 {
			t.Errorf("usage = %+v, want the call's", u)
		}
	}
}

// TestJudgeBudget: past its budget a question has no answer, so the
// claim model's verdict stands, and the filter is held no longer.
func TestJudgeBudget(t *testing.T) {
	t.Parallel()
	p := &scripted{answer: "CLAIM", delay: 5 * time.Second}
	j := New(context.Background(), p, Config{Route: "judge", Budget: 50 * time.Millisecond})
	start := time.Now()
	claim, ok := j.Judge("Turmeric cures arthritis.", "en")
	if ok || claim {
		t.Errorf("past the budget: claim %v ok %v, want no answer", claim, ok)
	}
	// A bound, not a measurement: the question ends at its budget, far
	// before the provider's 5 s.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the question took %v with a 50 ms budget", d)
	}
}
