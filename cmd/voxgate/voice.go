package main

import (
	"fmt"

	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/safety"
)

// defaultOpenAIBaseURL is where the Realtime API lives when OPENAI_BASE_URL
// is not set.
const defaultOpenAIBaseURL = "https://api.openai.com/v1"

// newBilling builds the ledger from the configured price table.
func newBilling(m *Main) (*billing.Ledger, error) {
	prices, err := loadPrices(m.Config)
	if err != nil {
		return nil, err
	}
	return billing.NewLedger(billing.LedgerParams{Pool: m.Pool, Prices: prices, Registerer: m.Registry, Logger: m.Logger})
}

// openAI is the provider's base URL and key. ok is false, with a startup
// warning naming what is off, when no key is set.
func openAI(m *Main, what string) (base, key string, ok bool) {
	key = m.Config.Secrets.OpenAIAPIKey
	if key == "" {
		m.Logger.Warn(what + " is off: OPENAI_API_KEY is not set")
		return "", "", false
	}
	base = m.Config.Secrets.OpenAIBaseURL
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	return base, key, true
}

// newVoice builds the voice control plane. Without OPENAI_API_KEY there is
// no provider to mint credentials with: voice is off (its routes answer
// 503) and the gateway says so at start, rather than failing every start.
func newVoice(m *Main) (voiceService, error) {
	base, key, ok := openAI(m, "voice")
	if !ok {
		return off{feature: "Voice"}, nil
	}
	rt, err := realtime.New(realtime.Params{BaseURL: base, APIKey: key})
	if err != nil {
		return nil, err
	}
	relay, err := relayNetwork(m.Config)
	if err != nil {
		return nil, err
	}
	params := controlplane.Params{
		Pool: m.Pool, Quota: m.Quota, Tools: m.Tools, Realtime: rt, Ledger: m.Ledger, Spool: m.Spool, Relay: relay,
		Config: m.Config.Voice, ContextTool: m.Config.ContextTool(), Registerer: m.Registry, Logger: m.Logger,
		SafetyIDs: safety.NewIdentifiers(m.Config.Secrets.SafetyKey()),
	}
	if chatConfigured(m.Router, m.Config) {
		params.Backend, params.BackendModel = m.Router, m.Config.Chat.Route
	}
	svc, err := controlplane.New(params)
	if err != nil {
		_ = relay.Close()
		return nil, err // not svc: a nil *Service would be a non-nil voiceService
	}
	return svc, nil
}

// relayNetwork opens the replica's one relay network (voice.relay): the
// shared UDP and ICE-TCP listeners every relayed session uses. The voice
// service closes it.
func relayNetwork(cfg *config.Config) (*realtime.Network, error) {
	rc := cfg.Voice.Relay
	p := realtime.NetworkParams{UDPAddr: rc.UDPAddr, UDPSockets: rc.UDPSockets, TCPAddr: rc.TCPAddr, PublicIPs: rc.PublicIPs,
		PortMin: rc.PortMin, PortMax: rc.PortMax, Loopback: rc.Loopback}
	for _, t := range rc.TURN {
		p.TURN = append(p.TURN, webrtc.ICEServer{URLs: t.URLs, Username: t.Username, Credential: cfg.Secrets.TURNCredential})
	}
	n, err := realtime.NewNetwork(p)
	if err != nil {
		return nil, fmt.Errorf("voice.relay: %w", err)
	}
	return n, nil
}
