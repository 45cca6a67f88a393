package realtime

import (
	"slices"
	"sync"

	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// KeptEnded is how many ended calls GET /sim/calls still lists, so a test
// can read a call's final counters after hanging up without the list growing
// without bound under a benchmark.
const KeptEnded = 100

// realtimeState is the Realtime half of a Server: minted secrets, live
// calls and WebSocket sessions, and the pion API their peers share.
type realtimeState struct {
	cfg     Config
	api     *webrtc.API
	secrets *secretStore

	mu      sync.Mutex
	closed  bool
	calls   map[string]*call
	ended   []*call
	sockets map[*rtSession]bool // sessions of WebSocket-only connections and of ended calls' sidebands
	wg      sync.WaitGroup      // every session goroutine
}

// Server serves the Realtime API over what the simulator shares and the
// Chat Completions engine whose script and bill it uses.
type Server struct {
	env *core.Env
	oa  *openai.Server
	rt  *realtimeState
}

// New is the Realtime surface over env and oa, its peers built
// with se (nil: loopback only).
func New(env *core.Env, oa *openai.Server, cfg Config, se *webrtc.SettingEngine) (*Server, error) {
	rt, err := newRealtimeState(cfg, se)
	if err != nil {
		return nil, err
	}
	return &Server{env: env, oa: oa, rt: rt}, nil
}

// PeerAPI is the pion API the surface's peers are built with; GPT-Live's
// peers share it.
func (s *Server) PeerAPI() *webrtc.API { return s.rt.api }

// Heard is what the simulated model hears in a user's audio turn
// (Realtime.Heard, with its default).
func (s *Server) Heard() string { return s.rt.cfg.Heard }

// CloseAll hangs up every call and socket.
func (s *Server) CloseAll() { s.rt.closeAll() }

func newRealtimeState(cfg Config, se *webrtc.SettingEngine) (*realtimeState, error) {
	engine := LoopbackSettingEngine()
	if se != nil {
		engine = *se
	}
	api, err := NewOpusAPI(engine)
	if err != nil {
		return nil, err
	}
	return &realtimeState{cfg: cfg.withDefaults(), api: api, secrets: newSecretStore(),
		calls: map[string]*call{}, sockets: map[*rtSession]bool{}}, nil
}

// startCall registers c and runs its session; false once the server closed.
func (rt *realtimeState) startCall(c *call) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return false
	}
	rt.calls[c.id] = c
	rt.run(c.sess)
	return true
}

// startSocket runs a WebSocket-only session; false once the server closed.
func (rt *realtimeState) startSocket(ss *rtSession) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return false
	}
	rt.sockets[ss] = true
	rt.run(ss)
	return true
}

// linger keeps an ended call's session running for its sidebands, among
// the sessions closeAll stops; false once the server closed.
func (rt *realtimeState) linger(ss *rtSession) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return false
	}
	rt.sockets[ss] = true
	close(ss.peerGone)
	return true
}

func (rt *realtimeState) run(ss *rtSession) {
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		ss.run()
		rt.mu.Lock()
		delete(rt.sockets, ss)
		rt.mu.Unlock()
	}()
}

func (rt *realtimeState) live(id string) *call {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.calls[id]
}

// retire moves an ended call to the short list of ended calls.
func (rt *realtimeState) retire(c *call) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.calls, c.id)
	rt.ended = append(rt.ended, c)
	if len(rt.ended) > KeptEnded {
		rt.ended = append(rt.ended[:0], rt.ended[len(rt.ended)-KeptEnded:]...)
	}
}

func (rt *realtimeState) snapshot() []CallStats {
	rt.mu.Lock()
	all := append([]*call(nil), rt.ended...)
	for _, c := range rt.calls {
		all = append(all, c)
	}
	rt.mu.Unlock()
	out := make([]CallStats, 0, len(all))
	for _, c := range all {
		out = append(out, c.sess.stats.snapshot())
	}
	slices.SortFunc(out, func(a, b CallStats) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// closeAll ends every call and socket and waits for their goroutines.
func (rt *realtimeState) closeAll() {
	rt.mu.Lock()
	rt.closed = true
	calls := make([]*call, 0, len(rt.calls))
	for _, c := range rt.calls {
		calls = append(calls, c)
	}
	socks := make([]*rtSession, 0, len(rt.sockets))
	for ss := range rt.sockets {
		socks = append(socks, ss)
	}
	rt.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() { c.end("server_closed") })
	}
	for _, ss := range socks {
		wg.Go(ss.stop)
	}
	wg.Wait()
	rt.wg.Wait()
}
