package anthropic

// Sonnet 5.5 always thinks, and the text it writes between tool calls
// ("Let me look that up.") comes back inside a thinking block, not a text
// block (models.md, "Read again 2026-11-28"). The gateway asks for no
// thinking and gives none back, so a thinking block never reaches the
// caller as such; dropping it would lose that text.
//
// Decision (docs/llm.md, "Thinking between tool calls"): the thinking read
// since the last text or tool_use block is the caller's answer text when a
// tool_use block comes next, given just before the call; thinking followed
// by a text block, or by the message's end, is the model's reasoning and
// is dropped. What this gives up: a model that reasons in a thinking block
// right before a tool call has that reasoning shown as answer text. It
// passes the output filter like any answer text, and the gateway never
// asks for thinking (TestAnthropicNeverDisablesThinking), so only models
// that always think send it.
//
// Thinking blocks are never replayed (llm.Message has no place for one):
// they are bound to the model that wrote them, and a failover or a tool
// loop on another model would be refused for one.

// spokeBeforeTool gives the thinking read since the last block that
// ended it as answer text, before the tool call about to begin.
func (s *anthDecoder) spokeBeforeTool() {
	if s.thought.Len() > 0 {
		s.text(s.thought.String())
		s.thought.Reset()
	}
}
