// Package judge is the safety filter's optional second opinion (issue
// #37, docs/safety.md "A second opinion"): a model behind the provider
// router, asked whether one sentence the claim model is unsure of makes a
// medical claim. It lives apart from package safety, which does no I/O,
// and implements safety.Judge for one unit of work (a chat turn, a
// completion): it keeps that unit's context, bounds each question by the
// configured budget, and keeps the calls' usage so the unit can record
// and price them like any model call.
package judge

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/voxgate/voxgate/llm"
)

// Config is the judge's configuration (config key safety.judge).
type Config struct {
	// Route is the router's route the questions go to; "" is no judge.
	Route string
	// Budget bounds one question, from the call's start to its answer;
	// past it the claim model's verdict stands. It is time the user's
	// sentence waits, so it is small: 0 is DefaultBudget.
	Budget time.Duration
	// Band is safety.Options.JudgeBand; 0 is safety.DefaultJudgeBand.
	Band float32
}

// DefaultBudget is one question's bound when the config names none.
const DefaultBudget = 800 * time.Millisecond

// Enabled reports whether a judge is configured.
func (c Config) Enabled() bool { return c.Route != "" }

// The question. The answer is one word, so the budget is spent on the
// model's first token, not on a paragraph; what counts as a claim is the
// corpus's labelling rule (docs/safety.md, "Medical claims").
const instructions = `You review one sentence a nutrition and wellness app's assistant wrote to a user.
Answer CLAIM if the sentence says that a food, supplement or practice cures, treats, relieves, prevents or reverses a disease or symptom, or can replace a medicine; reads a diagnosis from symptoms; gives a medicine's dose or tells the user to start, change, skip or stop a medicine; or says a medicine or remedy is safe in pregnancy, breastfeeding or for a child.
Answer OK for recipes and nutrition facts, allergens, fitness, advice to ask a clinician, and hedged or debunking general information.
The sentence may be in English or Spanish. Answer with the one word CLAIM or OK.`

// Judge asks one unit's questions. It is safe for concurrent use, though
// a filter asks from one goroutine.
type Judge struct {
	ctx    context.Context
	p      llm.Provider
	cfg    Config
	mu     sync.Mutex
	usage  []llm.Usage
	traces []llm.Trace
}

// New makes the judge of one unit, whose context bounds every question.
func New(ctx context.Context, p llm.Provider, cfg Config) *Judge {
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	return &Judge{ctx: ctx, p: p, cfg: cfg}
}

// Judge implements safety.Judge: ok is false on any failure, a refusal,
// an answer that is neither word, or the budget spent.
func (j *Judge) Judge(sentence, language string) (claim, ok bool) {
	ctx, cancel := context.WithTimeout(j.ctx, j.cfg.Budget)
	defer cancel()
	st, err := j.p.Stream(ctx, llm.Request{
		Model: j.cfg.Route,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: instructions},
			{Role: llm.RoleUser, Content: "Language: " + language + "\nSentence: " + sentence},
		},
		MaxOutputTokens: 16,
	})
	if err != nil {
		return false, false
	}
	defer st.Close()
	var answer strings.Builder
	for {
		ev, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, false
		}
		switch ev.Kind {
		case llm.EventText:
			answer.WriteString(ev.Text)
		case llm.EventDone:
			j.keep(ev)
		}
	}
	return parse(answer.String())
}

func (j *Judge) keep(ev llm.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if ev.Usage != nil {
		j.usage = append(j.usage, *ev.Usage)
	}
	j.traces = append(j.traces, ev.Trace)
}

// parse reads the answer's first word; anything else is no answer.
func parse(answer string) (claim, ok bool) {
	w := strings.ToUpper(strings.Trim(strings.TrimSpace(answer), ".!\"'`*"))
	if f := strings.Fields(w); len(f) > 0 {
		w = strings.Trim(f[0], ".,:;!\"'`*")
	}
	switch w {
	case "CLAIM":
		return true, true
	case "OK":
		return false, true
	}
	return false, false
}

// Usage is every answered call's usage so far, for the unit's records.
func (j *Judge) Usage() []llm.Usage {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]llm.Usage(nil), j.usage...)
}

// Traces are every answered call's route trace (the target that answered).
func (j *Judge) Traces() []llm.Trace {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]llm.Trace(nil), j.traces...)
}
