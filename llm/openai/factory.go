package openai

import "github.com/voxgate/voxgate/llm"

// DefaultBaseURL is the OpenAI API's base, for an openai provider
// neither the file nor OPENAI_BASE_URL points elsewhere.
const DefaultBaseURL = "https://api.openai.com/v1"

// Factory builds openai adapters on params, each with its
// provider's base URL and key. The adapter's own first-chunk wait stays
// beneath the router's deadlines, so a params without FirstChunk gets
// DefaultFirstChunkTimeouts: a reasoning model's route must not be cut at
// the adapter's 10 s.
func Factory(params Params) llm.Factory {
	return func(s llm.ProviderSpec) (llm.Provider, error) {
		p := params
		p.BaseURL, p.APIKey = s.BaseURL, s.APIKey
		p.ResponsesModels, p.Scope = s.ResponsesModels, s.Name
		if p.FirstChunk == nil {
			p.FirstChunk = llm.DefaultFirstChunkTimeouts()
		}
		if p.BaseURL == "" {
			p.BaseURL = DefaultBaseURL
		}
		return New(p)
	}
}
