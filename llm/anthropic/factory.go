package anthropic

import "github.com/voxgate/voxgate/llm"

// DefaultBaseURL is the Messages API's root.
const DefaultBaseURL = "https://api.anthropic.com"

// Factory builds anthropic adapters on params, each with its
// provider's name, base URL (the API root: the SDK adds v1/messages) and
// key.
func Factory(params Params) llm.Factory {
	return func(s llm.ProviderSpec) (llm.Provider, error) {
		p := params
		p.Name, p.BaseURL, p.APIKey = s.Name, s.BaseURL, s.APIKey
		if p.FirstChunk == nil {
			p.FirstChunk = llm.DefaultFirstChunkTimeouts()
		}
		if p.BaseURL == "" {
			p.BaseURL = DefaultBaseURL
		}
		return New(p)
	}
}
