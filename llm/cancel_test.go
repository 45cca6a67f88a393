package llm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
)

// stalledAdapter is an adapter against its own simulator surface, which
// stalls with the connection open after its first few chunks.
type stalledAdapter struct {
	name, endpoint, model string
	afterChunks           int // chunks before the stall: at least one text event
	start                 func(t *testing.T, cfg sim.Config) (*sim.Server, llm.Provider)
}

func stalledAdapters() []stalledAdapter {
	return []stalledAdapter{
		{"openai", sim.EndpointChatCompletions, "gpt-4o", 3, func(t *testing.T, cfg sim.Config) (*sim.Server, llm.Provider) {
			s, url := newSim(t, cfg)
			return s, newOpenAI(t, url, time.Minute, nil)
		}},
		{"anthropic", sim.EndpointAnthropicMessages, "claude-haiku-5-5", 4, func(t *testing.T, cfg sim.Config) (*sim.Server, llm.Provider) {
			s, url := newRootSim(t, cfg)
			return s, newAnthropic(t, url, anthropic.Params{Timeout: time.Minute}, nil)
		}},
		{"gemini", sim.EndpointGeminiStream, geminiModel, 1, func(t *testing.T, cfg sim.Config) (*sim.Server, llm.Provider) {
			s, url := newRootSim(t, cfg)
			return s, newGemini(t, url, time.Minute, nil)
		}},
	}
}

// TestCancelReachesUpstream ends each adapter's stalled stream three ways
// and checks that the caller gets its own error (context.Canceled, or
// ErrClosed after Close), never an *Error; that the simulator sees its
// client go promptly (DESIGN §7 asks 500 ms; the test allows a loaded
// machine 2 s, far below the minute the adapters would otherwise wait);
// and that Close is safe twice, with ErrClosed from Next after it.
func TestCancelReachesUpstream(t *testing.T) {
	t.Parallel()
	ends := []struct {
		name    string
		end     func(cancelStream, cancelNext context.CancelFunc, st llm.Stream)
		wantErr error
	}{
		{"Close", func(_, _ context.CancelFunc, st llm.Stream) { _ = st.Close() }, llm.ErrClosed},
		{"the Stream context", func(cancel, _ context.CancelFunc, _ llm.Stream) { cancel() }, context.Canceled},
		{"the Next context", func(_, cancel context.CancelFunc, _ llm.Stream) { cancel() }, context.Canceled},
	}
	for _, a := range stalledAdapters() {
		for _, c := range ends {
			t.Run(a.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				s, p := a.start(t, sim.Config{Script: sim.Script{Text: "Some text, then a stall."}, Faults: []sim.Fault{
					{Endpoint: a.endpoint, Kind: sim.FaultTimeout, AfterChunks: a.afterChunks}}})
				streamCtx, cancelStream := context.WithCancel(t.Context())
				defer cancelStream()
				st, err := p.Stream(streamCtx, userRequest(a.model, "hi"))
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				nextCtx, cancelNext := context.WithCancel(t.Context())
				defer cancelNext()
				if ev, err := st.Next(nextCtx); err != nil || ev.Kind != llm.EventText {
					t.Fatalf("first event: %+v, %v", ev, err)
				}
				// Next waits on the stall (or is called again) while the
				// stream is ended: either way it must end at once.
				errc := make(chan error, 1)
				go func() {
					for {
						if _, err := st.Next(nextCtx); err != nil {
							errc <- err
							return
						}
					}
				}()
				ended := time.Now()
				c.end(cancelStream, cancelNext, st)
				select {
				case err := <-errc:
					var e *llm.Error
					if !errors.Is(err, c.wantErr) || errors.As(err, &e) {
						t.Errorf("Next: got %v, want %v", err, c.wantErr)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("Next still blocked 5 s after the stream was ended")
				}
				stats := testkit.WaitCancelled(t, s, a.endpoint)
				if lag := stats.LastCancelledAt.Sub(ended); lag > 2*time.Second {
					t.Errorf("the simulator saw the cancel %s after it, want within 2 s", lag)
				}
				if err := st.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				if err := st.Close(); err != nil {
					t.Errorf("second Close: %v", err)
				}
				if _, err := st.Next(t.Context()); !errors.Is(err, llm.ErrClosed) {
					t.Errorf("Next after Close: got %v, want ErrClosed", err)
				}
			})
		}
	}
}
