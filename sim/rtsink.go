package sim

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

// sink is one transport's outgoing side: the session enqueues serialized
// events and a writer goroutine sends them, so a slow socket never blocks
// the session.
type sink struct {
	path string
	q    chan sinkMsg
	// write sends one event; graceful and abrupt end the transport, with a
	// close handshake and without one (a fault).
	write    func([]byte) error
	graceful func(code int, text string)
	abrupt   func()
	// dropAfter is how many events go out before a drop fault strikes; -1
	// means never. Only the session goroutine reads or changes it.
	dropAfter int
	sent      int
	// cutAtClose: a live sideband is cut when its session closes, before
	// session.closed (a fault). Set before the sink joins its session.
	cutAtClose bool

	once sync.Once
	gone chan struct{} // closed when the writer has stopped
}

type sinkOp int

const (
	opEvent     sinkOp = iota
	opClose            // flush, then close gracefully
	opGoingAway        // flush, then close gracefully: the session expired
	opDrop             // flush, then cut the transport (fault)
)

// WebSocket close codes of a graceful end.
const (
	closeNormal    = 1000
	closeGoingAway = 1001
)

type sinkMsg struct {
	op   sinkOp
	data []byte
}

func newSink(path string, write func([]byte) error, graceful func(code int, text string), abrupt func()) *sink {
	return &sink{path: path, q: make(chan sinkMsg, sinkQueue), write: write, graceful: graceful,
		abrupt: abrupt, dropAfter: -1, gone: make(chan struct{})}
}

// run sends queued events until the transport fails or is closed.
func (k *sink) run() {
	defer close(k.gone)
	for m := range k.q {
		switch m.op {
		case opEvent:
			if k.write(m.data) != nil {
				k.abrupt()
				return
			}
		case opClose:
			k.graceful(closeNormal, "session ended")
			return
		case opGoingAway:
			k.graceful(closeGoingAway, "session expired")
			return
		case opDrop:
			k.abrupt()
			return
		}
	}
}

// push enqueues an event. It reports false when the sink is finished (it
// struck its drop fault, or it fell too far behind and was cut).
func (k *sink) push(data []byte) bool {
	select {
	case k.q <- sinkMsg{op: opEvent, data: data}:
	default:
		k.end(opDrop)
		return false
	}
	k.sent++
	if k.dropAfter >= 0 && k.sent >= k.dropAfter {
		k.end(opDrop)
		return false
	}
	return true
}

// end asks the writer to flush and stop; only the first call counts. It
// never blocks: a full queue is cut instead of flushed.
func (k *sink) end(op sinkOp) {
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
