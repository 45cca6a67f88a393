package live

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
)

// FuzzDecodeLiveClientEvent feeds arbitrary client events to the decoder
// and, when it accepts one, to a session's state machine (no transports).
// A refusal must be a complete error; nothing may panic.
func FuzzDecodeLiveClientEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"session.commentary.append","event_id":"e1","delegation_id":"item_1","content":"Try an omelette."}`,
		`{"type":"session.thinking.append","delegation_id":null,"content":"x"}`,
		`{"type":"session.instructions.append","delegation_id":null,"content":""}`,
		`{"type":"session.update","session":{"delegation":{"type":"client","acknowledgement_delay_ms":400},"triggers":[]}}`,
		`{"type":"session.update","session":{"model":"m"}}`, `{"type":"session.close","event_id":"c"}`,
		`{"type":"session.input_audio.mute"}`, `{"type":"response.create"}`, `{"type":7}`, `{"event_id":5}`,
		`{`, `[]`, `null`, `{"type":"session.commentary.append","content":"x"}`,
	} {
		f.Add([]byte(s))
	}
	// The surface alone, over a bare core: no faults, no latency.
	env := &core.Env{Faults: core.NewInjector(nil, 0), Stats: core.NewStatsBook(nil),
		Log: slog.New(slog.DiscardHandler), MaxBody: 1 << 20, Done: make(chan struct{})}
	script, err := openai.CompileScript(openai.Script{})
	if err != nil {
		f.Fatal(err)
	}
	oa := openai.New(env, script, nil, nil, openai.Chat{})
	rts, err := realtime.New(env, oa, realtime.Config{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	srv := New(env, oa, rts, Config{})
	f.Cleanup(func() { srv.CloseAll(); rts.CloseAll() })
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, apiErr := decodeLiveClientEvent(data)
		if ev == nil {
			t.Fatal("nil event")
		}
		if apiErr != nil {
			if apiErr.Type == "" || apiErr.Message == "" || apiErr.Code == "" {
				t.Fatalf("incomplete error %+v for %q", apiErr, data)
			}
			return
		}
		ls := srv.newLiveSession(liveSettings{model: "gpt-live-1", voice: json.RawMessage(`"marin"`)}, 0)
		ls.delegations["item_1"] = true
		if ev.Type != "session.close" {
			_ = ls.apply(ev, &realtime.Sink{Path: realtime.PathSideband})
		}
		if _, err := json.Marshal(ls.resource()); err != nil {
			t.Fatalf("session no longer renders after %q: %v", data, err)
		}
	})
}

// FuzzDecodeLiveCreate feeds arbitrary POST /v1/live/sessions bodies to the
// config decoder: a refusal must be a complete error, an acceptance a model
// and an offer.
func FuzzDecodeLiveCreate(f *testing.F) {
	for _, s := range []string{
		`{"session":{"model":"gpt-live-1","instructions":"hi","store":false,"delegation":{"type":"client","acknowledgement_delay_ms":0},"audio":{"output":{"voice":"marin"}},"client":{"data_channel":{"allowed_client_events":["session.input_audio.mute"],"allowed_server_events":[{"type":"session.started"}]}},"input":[],"triggers":[]},"transport":{"type":"webrtc","sdp":"v=0"}}`,
		`{"session":{"model":"gpt-live-1","client":{"data_channel":{"allowed_client_events":"all","allowed_server_events":"all"}}},"transport":{"sdp":"x"}}`,
		`{"session":{"model":"gpt-live-1","delegation":null,"audio":{"output":{"voice":{"id":"v"}}}},"transport":{"sdp":"x"}}`,
		`{"session":{"model":5},"transport":{"sdp":"x"}}`, `{"session":{},"transport":{}}`, `{}`, `[]`, `null`, `{`,
		`{"session":{"model":"m","delegation":{"acknowledgement_delay_ms":1e99}},"transport":{"sdp":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, offer, apiErr := decodeLiveCreate(data)
		if apiErr != nil {
			if apiErr.Type == "" || apiErr.Message == "" || apiErr.Status != 400 {
				t.Fatalf("incomplete error %+v for %q", apiErr, data)
			}
			return
		}
		if set.model == "" || offer == "" || len(set.voice) == 0 {
			t.Fatalf("accepted %q without a model, an offer or a voice", data)
		}
	})
}
