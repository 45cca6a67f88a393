package main

import (
	"context"
	"sync"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/chat"
	"github.com/voxgate/voxgate/completions"
	"github.com/voxgate/voxgate/responses"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/unit"
)

// newChat builds the chat service and the OpenAI-compatible endpoints
// over the text router (m.Router), whose chat.route every turn takes; the
// two share one unit.Env, with the Responses endpoint (m.Responses). When no target of that route has a provider
// that can be called (no key for any of them), both are off (their routes
// answer 503) and the gateway says so at start.
func newChat(m *Main) (chatService, completionsService, error) {
	if !chatConfigured(m.Router, m.Config) {
		m.Logger.Warn("chat is off: no provider of chat.route has a key", "route", m.Config.Chat.Route)
		m.Responses = off{feature: "Chat"}
		return off{feature: "Chat"}, off{feature: "Chat"}, nil
	}
	env := &unit.Env{Pool: m.Pool, Quota: m.Quota, Provider: m.Router, Ledger: m.Ledger, Audit: audit.New(m.Pool),
		Spool: m.Spool, SafetyIDs: safety.NewIdentifiers(m.Config.Secrets.SafetyKey()),
		Judge: judge.Config(m.Config.Safety.Judge), Log: m.Logger}
	models := routeModels(m.Config)
	svc, err := chat.New(chat.Params{Env: env, Tools: m.Tools, RouteModels: models, Config: m.Config.Chat,
		ContextTool: m.Config.ContextTool(), Registerer: m.Registry})
	if err != nil {
		return nil, nil, err // not svc: a nil *Service would be a non-nil chatService
	}
	compl, err := completions.New(completions.Params{Env: env, Models: models, Config: m.Config.Chat, Registerer: m.Registry})
	if err != nil {
		return nil, nil, err
	}
	resp, err := responses.New(responses.Params{Env: env, Models: models, Config: m.Config.Chat, Registerer: m.Registry})
	if err != nil {
		return nil, nil, err
	}
	m.Responses = resp
	return chatAndResponses{chatService: svc, responses: resp}, compl, nil
}

// chatAndResponses is chat with the Responses endpoint's background work
// beside its own: Run purges both chat sessions and stored responses past
// chat.retention_days, so the composition root starts one Run for both.
type chatAndResponses struct {
	chatService
	responses responsesService
}

func (c chatAndResponses) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.responses.Run(ctx) })
	c.chatService.Run(ctx)
	wg.Wait()
}
