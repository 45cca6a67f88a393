package main

import (
	"fmt"
	"maps"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/sse"
)

// newChat builds the chat service over OpenAI's Chat Completions (the
// simulator under voxgate dev). Without OPENAI_API_KEY there is no
// provider: chat is off (its routes answer 503) and the gateway says so at
// start. A chat model with no price stops startup.
func newChat(m *Main) (chatService, error) {
	base, key, ok := openAI(m, "chat")
	if !ok {
		return off{feature: "Chat"}, nil
	}
	firstChunk := llm.DefaultFirstChunkTimeouts()
	maps.Copy(firstChunk, m.Config.Chat.FirstChunkTimeouts)
	provider, err := llm.NewOpenAI(llm.OpenAIParams{BaseURL: base, APIKey: key,
		Timeout: m.Config.Chat.ChunkTimeout, FirstChunk: firstChunk})
	if err != nil {
		return nil, fmt.Errorf("chat.chunk_timeout, chat.first_chunk_timeouts: %w", err)
	}
	svc, err := sse.New(sse.Params{
		Pool: m.Pool, Quota: m.Quota, Tools: m.Tools, Provider: provider, Ledger: m.Ledger, Spool: m.Spool,
		Config: m.Config.Chat, ContextTool: m.Config.ContextTool(), Registerer: m.Registry, Logger: m.Logger,
		SafetyIDs: safety.NewIdentifiers(m.Config.Secrets.SafetyKey()),
	})
	if err != nil {
		return nil, err // not svc: a nil *Service would be a non-nil chatService
	}
	return svc, nil
}
