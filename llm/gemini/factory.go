package gemini

import (
	"context"

	"github.com/voxgate/voxgate/llm"
)

// Factory builds gemini adapters on params, each with its
// provider's name, base URL and key. An empty base URL leaves genai's own
// (GOOGLE_GEMINI_BASE_URL, else Google's endpoint).
func Factory(params Params) llm.Factory {
	return func(s llm.ProviderSpec) (llm.Provider, error) {
		p := params
		p.Name, p.BaseURL, p.APIKey, p.Store = s.Name, s.BaseURL, s.APIKey, s.Store
		if p.FirstChunk == nil {
			p.FirstChunk = llm.DefaultFirstChunkTimeouts()
		}
		// genai reads only its environment defaults from the context.
		return New(context.Background(), p)
	}
}
