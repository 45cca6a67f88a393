package llm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// A caller that leaves while a continuation waits on its target, by Close
// or by the end of the context it gave Next, ends that request at once:
// Next returns ErrClosed or the context's error, and the simulator sees
// the client go.
func TestContinueCallerLeaves(t *testing.T) {
	t.Parallel()
	for _, byClose := range []bool{true, false} {
		name := "next's context"
		if byClose {
			name = "close"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
			fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
			primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, AfterChunks: 41})
			fallback.fault(t, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultTimeout})
			fb := anthropicTarget(t, "fallback", "claude-haiku-4-5", fallback, llm.ContinuePrefill)
			fb.target.FirstContent = time.Minute // only the caller ends the wait
			r, _ := contRouter(t, openaiTarget(t, "primary", primaryModel, primary, ""), fb)
			st, err := r.Stream(t.Context(), ask())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			got := make(chan error, 1)
			go func() {
				for {
					if _, err := st.Next(ctx); err != nil {
						got <- err
						return
					}
				}
			}()
			testkit.Eventually(t, t.Context(), "the continuation's request", func() bool { return len(fallback.requests()) == 1 })
			if byClose {
				st.Close()
			} else {
				cancel()
			}
			select {
			case err := <-got:
				if byClose && !errors.Is(err, llm.ErrClosed) || !byClose && !errors.Is(err, context.Canceled) {
					t.Errorf("Next: got %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Next still waits on the continuation after the caller left")
			}
			testkit.WaitCancelled(t, fallback.sim, sim.EndpointAnthropicMessages)
		})
	}
}
