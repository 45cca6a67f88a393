package realtime

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
)

// rtpWriter is where a forwarder writes: the other leg's local track.
type rtpWriter interface{ WriteRTP(*rtp.Packet) error }

// Opus on the Realtime API: a 48 kHz clock and 20 ms frames.
const (
	opusClock      = 48000
	opusFrameTicks = opusClock * 20 / 1000
)

// epoch anchors the relay's monotonic clock: time.Since(epoch) reads the
// monotonic clock without allocating.
var epoch = time.Now()

func monoNow() int64 { return int64(time.Since(epoch)) }

// forwarder carries one direction's RTP from a source leg's remote track to
// the other leg's local track. It never decodes, transcodes or buffers:
// each packet's header is parsed into one reused rtp.Packet, its sequence
// number and timestamp moved by the current offsets, and it is written on.
// The offsets are 0 for the first source and rebased on a new source's
// first packet (a replaced provider leg), so the receiving leg sees one
// continuous stream: the sequence number goes on by one and the timestamp
// by the wall time that passed, in whole frames.
type forwarder struct {
	out rtpWriter

	mu      sync.Mutex // one writer per direction, whichever leg is its source
	gen     uint64     // the source generation forwarded; older readers are dropped
	pkt     rtp.Packet
	started bool
	rebase  bool // set when a new source is installed, whatever its SSRC
	ssrc    uint32
	seqOff  uint16
	tsOff   uint32
	lastSeq uint16 // highest sequence number written, after rewriting
	lastTS  uint32
	lastAt  int64 // monotonic ns when lastSeq was written

	// The current source's reception (RFC 3550 A.3, A.8), and the loss of
	// the sources before it.
	extBase, extMax uint64
	received        uint64
	lostBefore      uint64
	transit         int64
	jitter16        uint32 // interarrival jitter in clock ticks, times 16

	packets, bytes, malformed, stale atomic.Uint64
	// latency counts packets by the time from their read to their write
	// on (ForwardBuckets, the last beyond them); latencySum in ns.
	latency    [len(ForwardBuckets) + 1]atomic.Uint64
	latencySum atomic.Int64
}

// ForwardBuckets are the upper bounds of FlowStats.Latency's buckets: the
// relay's own part of a packet's trip, from its read off one leg (after
// SRTP) to its write on the other (through SRTP and the socket).
var ForwardBuckets = [...]time.Duration{50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond,
	500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond}

// observe counts one packet's forwarding time, without allocating.
func (f *forwarder) observe(d int64) {
	i := 0
	for i < len(ForwardBuckets) && d > int64(ForwardBuckets[i]) {
		i++
	}
	f.latency[i].Add(1)
	f.latencySum.Add(d)
}

// forward writes one packet read from the source of generation gen, which
// arrived at now (monoNow). b is the reader's buffer; it is rewritten in
// place through the reused packet and not kept.
func (f *forwarder) forward(gen uint64, b []byte, now int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen != f.gen {
		f.stale.Add(1)
		return nil
	}
	if _, err := f.pkt.Header.Unmarshal(b); err != nil || f.pkt.Version != 2 {
		f.malformed.Add(1)
		return nil
	}
	hlen := f.pkt.Header.MarshalSize()
	f.pkt.Payload = b[hlen:]
	// Padding, if any, stays at the end of Payload with its count byte and
	// the header's P bit: written on as it came.
	if !f.started || f.rebase || f.pkt.SSRC != f.ssrc {
		f.rebaseOn(now)
	}
	f.count(now)
	f.pkt.SequenceNumber += f.seqOff
	f.pkt.Timestamp += f.tsOff
	if d := int16(f.pkt.SequenceNumber - f.lastSeq); d > 0 || f.lastAt == 0 {
		f.lastSeq, f.lastTS, f.lastAt = f.pkt.SequenceNumber, f.pkt.Timestamp, now
	}
	err := f.out.WriteRTP(&f.pkt)
	if err == nil {
		f.packets.Add(1)
		f.bytes.Add(uint64(len(b)))
		f.observe(monoNow() - now)
	}
	f.pkt.Payload = nil // the buffer is the reader's
	return err
}

// rebaseOn starts forwarding the source of the packet in f.pkt. After
// another source, the sequence number follows the last one written and the
// timestamp the wall time since it, rounded to whole frames (at least
// one): the receiver's jitter buffer sees a gap of that length, not a jump.
func (f *forwarder) rebaseOn(now int64) {
	if f.started {
		f.lostBefore += f.lostNow()
		frames := max(1, (now-f.lastAt+int64(10*time.Millisecond))*opusClock/int64(time.Second)/opusFrameTicks)
		f.seqOff = f.lastSeq + 1 - f.pkt.SequenceNumber
		f.tsOff = f.lastTS + uint32(frames*opusFrameTicks) - f.pkt.Timestamp
	}
	f.started, f.rebase, f.ssrc = true, false, f.pkt.SSRC
	f.extBase, f.extMax, f.received = uint64(f.pkt.SequenceNumber), uint64(f.pkt.SequenceNumber), 0
	f.jitter16, f.transit = 0, 0
}

// count keeps the source's highest extended sequence number, packets
// received and interarrival jitter, before the rewrite.
func (f *forwarder) count(now int64) {
	if d := int16(f.pkt.SequenceNumber - uint16(f.extMax)); d > 0 {
		f.extMax += uint64(d)
	}
	f.received++
	arrival := now / (int64(time.Second) / opusClock)
	transit := arrival - int64(f.pkt.Timestamp)
	if f.received > 1 {
		d := transit - f.transit
		if d < 0 {
			d = -d
		}
		f.jitter16 += uint32(d) - ((f.jitter16 + 8) >> 4)
	}
	f.transit = transit
}

func (f *forwarder) lostNow() uint64 {
	expected := f.extMax - f.extBase + 1
	if expected <= f.received {
		return 0
	}
	return expected - f.received
}

// install makes gen the source forwarded from now on: packets of older
// readers are dropped, and the next packet rebases the offsets.
func (f *forwarder) install(gen uint64) {
	f.mu.Lock()
	f.gen, f.rebase = gen, true
	f.mu.Unlock()
}

// FlowStats are one direction's counters.
type FlowStats struct {
	// Packets and Bytes forwarded.
	Packets, Bytes uint64
	// Lost is the packets the source's sequence numbers say never arrived
	// at the relay, over every source this direction had.
	Lost uint64
	// Jitter is the current source's interarrival jitter (RFC 3550 A.8).
	Jitter time.Duration
	// Malformed packets were not RTP; Stale ones came from a replaced leg.
	Malformed, Stale uint64
	// Latency counts the forwarded packets by their time in the relay, in
	// ForwardBuckets (not cumulative; the last counts those beyond);
	// LatencySum is their total.
	Latency    [len(ForwardBuckets) + 1]uint64
	LatencySum time.Duration
}

func (f *forwarder) stats() FlowStats {
	f.mu.Lock()
	s := FlowStats{Lost: f.lostBefore + f.lostNow(),
		Jitter: time.Duration(f.jitter16/16) * time.Second / opusClock}
	if !f.started {
		s.Lost = 0
	}
	f.mu.Unlock()
	s.Packets, s.Bytes = f.packets.Load(), f.bytes.Load()
	s.Malformed, s.Stale = f.malformed.Load(), f.stale.Load()
	for i := range f.latency {
		s.Latency[i] = f.latency[i].Load()
	}
	s.LatencySum = time.Duration(f.latencySum.Load())
	return s
}
