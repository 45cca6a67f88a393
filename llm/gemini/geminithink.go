package gemini

import (
	"strings"

	"google.golang.org/genai"
)

// thinkingLevel is the thinkingLevel a reasoning effort asks of a Gemini 3
// model, "" for none: 2.5 models take a token budget instead, and an
// effort the table does not know is left to the model's default. A model
// that refuses MINIMAL (gemini-3.8-flash: LOW, MEDIUM, HIGH only, a 400
// otherwise; models.md) gets LOW, the nearest it takes.
func thinkingLevel(model, effort string) genai.ThinkingLevel {
	if !strings.HasPrefix(model, "gemini-3") {
		return ""
	}
	level := map[string]genai.ThinkingLevel{
		"none": genai.ThinkingLevelMinimal, "minimal": genai.ThinkingLevelMinimal,
		"low": genai.ThinkingLevelLow, "medium": genai.ThinkingLevelMedium,
		"high": genai.ThinkingLevelHigh, "xhigh": genai.ThinkingLevelHigh,
	}[effort]
	if level == genai.ThinkingLevelMinimal && noMinimal(model) {
		level = genai.ThinkingLevelLow
	}
	return level
}

// noMinimal reports whether model (or the family of a snapshot of it)
// refuses thinkingLevel MINIMAL.
func noMinimal(model string) bool {
	return model == "gemini-3.8-flash" || strings.HasPrefix(model, "gemini-3.8-flash-") && !strings.HasPrefix(model, "gemini-3.8-flash-lite")
}
