package realtime

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
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

	// What the last receiver report about the current source said
	// (RFC 3550 A.3): its packets expected and received, its highest
	// sequence number; rrDone once one was sent.
	rrExpected, rrReceived, rrExt uint64
	rrDone                        bool

	packets, bytes, malformed, stale atomic.Uint64
	octets                           atomic.Uint64 // payload bytes forwarded, for sender reports
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
		f.octets.Add(uint64(len(b) - hlen))
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
	f.rrExpected, f.rrReceived, f.rrExt, f.rrDone = 0, 0, 0, false
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

// sending is what a sender report about this direction's output says at
// now (monoNow): packets and payload bytes written, and the RTP timestamp
// of now on the output's timeline (the last written, moved on by the
// time since). Not ok before the first packet, nor while a write holds
// the forwarder: over ICE-TCP a write blocks while the phone's connection
// stalls, and the reporter that asks serves every call (it skips a turn).
func (f *forwarder) sending(now int64) (packets, octets uint64, ts uint32, ok bool) {
	if !f.mu.TryLock() {
		return 0, 0, 0, false
	}
	defer f.mu.Unlock()
	if f.lastAt == 0 {
		return 0, 0, 0, false
	}
	ts = f.lastTS + uint32((now-f.lastAt)*opusClock/int64(time.Second))
	return f.packets.Load(), f.octets.Load(), ts, true
}

// reception is the receiver report block about the current source, if it
// is of generation gen and sent something since the last one (RFC 3550
// 6.4.1, A.3): the loss since that report in 256ths, the cumulative loss,
// the extended highest sequence number and the interarrival jitter. The
// caller adds LSR and DLSR. Like sending, not while a write holds the
// forwarder.
func (f *forwarder) reception(gen uint64) (rtcp.ReceptionReport, bool) {
	if !f.mu.TryLock() {
		return rtcp.ReceptionReport{}, false
	}
	defer f.mu.Unlock()
	if !f.started || f.rebase || gen != f.gen || (f.rrDone && f.extMax == f.rrExt) {
		return rtcp.ReceptionReport{}, false
	}
	expected := f.extMax - f.extBase + 1
	rep := rtcp.ReceptionReport{SSRC: f.ssrc, LastSequenceNumber: uint32(f.extMax), Jitter: f.jitter16 >> 4}
	if expected > f.received {
		rep.TotalLost = uint32(min(expected-f.received, 0x7fffff))
	}
	if e, g := expected-f.rrExpected, f.received-f.rrReceived; e > g {
		rep.FractionLost = uint8(min(255, (e-g)<<8/e))
	}
	f.rrExpected, f.rrReceived, f.rrExt, f.rrDone = expected, f.received, f.extMax, true
	return rep, true
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
