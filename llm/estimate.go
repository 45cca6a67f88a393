package llm

// What a provider did not report is estimated by one rule of thumb, about
// four bytes a token, rounded up: the prompt a call sent (every message's
// text and tool calls, every tool's name, description and schema) and the
// text and arguments that came back. Chat turns, completions and the
// attempts a continuation took over count by it, so an estimate reads the
// same wherever it is recorded (usage_source server_observed).

// EstimateInput is req's prompt in tokens.
func EstimateInput(req Request) int64 {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return EstimateOutput(n)
}

// EstimateOutput is bytes of an answer in tokens.
func EstimateOutput(bytes int) int64 { return int64((bytes + 3) / 4) }
