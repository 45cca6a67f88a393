package openai

import (
	"time"
)

// What sim/responses borrows from the Chat Completions engine beyond its
// exported types: the unexported pieces it would otherwise copy.

// CheckEffort applies the models' rules on reasoning effort to req, with
// the real API's 400s, as Chat Completions does.
func (m *ChatModels) CheckEffort(req *ChatRequest) error { return m.checkEffort(req) }

// BillsCacheWrites reports whether model reports its cache writes.
func (m *ChatModels) BillsCacheWrites(model string) bool { return m.billsCacheWrites(model) }

// BillCompletion counts c in the organization's usage and costs as a chat
// call of its model, with reasoning tokens among its output tokens (the
// completions usage API counts every text generation, whichever endpoint).
func (s *Server) BillCompletion(now time.Time, c *Completion, reasoning int) {
	u := c.Usage
	u.CompletionTokens += reasoning
	s.Org.Bill(now, c.Model, chatUsage(u, "", c.ServiceTier))
}

// CompletionTokens is the token count of text and calls as the simulator
// counts a completion's output.
func CompletionTokens(text string, calls []ToolCall) int {
	return TokensFor(completionBytes(text, calls))
}

// ResponseID is the id of c as the engine assigned it.
func (c *Completion) ResponseID() string { return c.id }

// ReportWrites makes p report its cache writes, as models that bill them do.
func (p *PromptTokens) ReportWrites(on bool) { p.reportWrites = on }
