package realtime

import (
	"sync"
)

// Paths a client event can arrive by and server events leave by; they name
// the transports in per-call counters.
const (
	PathDataChannel = "datachannel"
	PathSideband    = "sideband"
	PathWebSocket   = "websocket"
)

// sinkQueue bounds the events waiting for one slow transport. A client that
// falls this far behind is dropped, as the real API drops a stalled socket,
// rather than stalling the session for every other transport.
const sinkQueue = 1024

// Sink is one transport's outgoing side: the session enqueues serialized
// events and a writer goroutine sends them, so a slow socket never blocks
// the session.
type Sink struct {
	Path string
	q    chan sinkMsg
	// write sends one event; graceful and abrupt end the transport, with a
	// close handshake and without one (a fault).
	write    func([]byte) error
	graceful func(code int, text string)
	abrupt   func()
	// DropAfter is how many events go out before a drop fault strikes; -1
	// means never. Only the session goroutine reads or changes it.
	DropAfter int
	sent      int
	// CutAtClose: a live sideband is cut when its session closes, before
	// session.closed (a fault). Set before the sink joins its session.
	CutAtClose bool

	once sync.Once
	Gone chan struct{} // closed when the writer has stopped
}

type SinkOp int

const (
	opEvent     SinkOp = iota
	OpClose            // flush, then close gracefully
	opGoingAway        // flush, then close gracefully: the session expired
	OpDrop             // flush, then cut the transport (fault)
)

// WebSocket close codes of a graceful end.
const (
	CloseNormal    = 1000
	CloseGoingAway = 1001
)

type sinkMsg struct {
	op   SinkOp
	data []byte
}

func newSink(path string, write func([]byte) error, graceful func(code int, text string), abrupt func()) *Sink {
	return &Sink{Path: path, q: make(chan sinkMsg, sinkQueue), write: write, graceful: graceful,
		abrupt: abrupt, DropAfter: -1, Gone: make(chan struct{})}
}

// Run sends queued events until the transport fails or is closed.
func (k *Sink) Run() {
	defer close(k.Gone)
	for m := range k.q {
		switch m.op {
		case opEvent:
			if k.write(m.data) != nil {
				k.abrupt()
				return
			}
		case OpClose:
			k.graceful(CloseNormal, "session ended")
			return
		case opGoingAway:
			k.graceful(CloseGoingAway, "session expired")
			return
		case OpDrop:
			k.abrupt()
			return
		}
	}
}

// Push enqueues an event. It reports false when the sink is finished (it
// struck its drop fault, or it fell too far behind and was cut).
func (k *Sink) Push(data []byte) bool {
	select {
	case k.q <- sinkMsg{op: opEvent, data: data}:
	default:
		k.End(OpDrop)
		return false
	}
	k.sent++
	if k.DropAfter >= 0 && k.sent >= k.DropAfter {
		k.End(OpDrop)
		return false
	}
	return true
}

// End asks the writer to flush and stop; only the first call counts. It
// never blocks: a full queue is cut instead of flushed.
func (k *Sink) End(op SinkOp) {
	k.once.Do(func() {
		select {
		case k.q <- sinkMsg{op: op}:
		default:
			// The writer is stuck on a stalled transport; cutting it makes
			// the pending write fail, and the writer then stops.
			go k.abrupt()
		}
	})
}
