package tools

import "github.com/voxgate/voxgate/llm"

// Specs are ts as the model sees them in a request's tool list: the one
// body for a chat turn's tools and a GPT-Live delegation's.
func Specs(ts []*Tool) []llm.ToolSpec {
	out := make([]llm.ToolSpec, 0, len(ts))
	for _, t := range ts {
		out = append(out, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}
