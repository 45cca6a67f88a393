package main

import (
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/sse"
)

// newChat builds the chat service over the text router (m.Router), whose
// chat.route every turn takes. When no target of that route has a
// provider that can be called (no key for any of them), chat is off (its
// routes answer 503) and the gateway says so at start.
func newChat(m *Main) (chatService, error) {
	if !chatConfigured(m.Router, m.Config) {
		m.Logger.Warn("chat is off: no provider of chat.route has a key", "route", m.Config.Chat.Route)
		return off{feature: "Chat"}, nil
	}
	svc, err := sse.New(sse.Params{
		Pool: m.Pool, Quota: m.Quota, Tools: m.Tools, Provider: m.Router, RouteModels: routeModels(m.Config),
		Ledger: m.Ledger, Spool: m.Spool,
		Config: m.Config.Chat, ContextTool: m.Config.ContextTool(), Registerer: m.Registry, Logger: m.Logger,
		SafetyIDs: safety.NewIdentifiers(m.Config.Secrets.SafetyKey()),
		Judge:     judge.Config(m.Config.Safety.Judge),
	})
	if err != nil {
		return nil, err // not svc: a nil *Service would be a non-nil chatService
	}
	return svc, nil
}
