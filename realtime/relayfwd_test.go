package realtime

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/pion/rtp"
)

// discard is a local track that takes packets and does nothing: what the
// forwarding function itself costs, without pion's SRTP and socket.
type discard struct{ n int }

func (d *discard) WriteRTP(p *rtp.Packet) error { d.n += len(p.Payload); return nil }

// browserPacket is an Opus packet as a browser sends it: a one-byte header
// extension (audio level, abs-send-time, transport-wide sequence) and a
// 60-byte frame.
func browserPacket(tb testing.TB) []byte {
	tb.Helper()
	p := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: 1, Timestamp: 960, SSRC: 0x1234}, Payload: make([]byte, 60)}
	for id, v := range map[uint8][]byte{1: {0x80}, 2: {1, 2, 3}, 3: {0, 1}} {
		if err := p.SetExtension(id, v); err != nil {
			tb.Fatal(err)
		}
	}
	b, err := p.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// The forwarding function, against two baselines in the same run: a copy
// of the packet (the least any relay does) and a naive forwarder that
// unmarshals into a fresh packet and marshals it again.
//
//	go test ./realtime -run '^$' -bench 'RelayForward' -benchmem -count 3
func BenchmarkRelayForward(b *testing.B) {
	pkt := browserPacket(b)
	b.Run("forward", func(b *testing.B) {
		f := &forwarder{out: &discard{}}
		b.ReportAllocs()
		for i := range b.N {
			binary.BigEndian.PutUint16(pkt[2:], uint16(i))
			binary.BigEndian.PutUint32(pkt[4:], uint32(i)*opusFrameTicks)
			if err := f.forward(0, pkt, int64(i)*20e6); err != nil {
				b.Fatal(err)
			}
		}
		if f.packets.Load() != uint64(b.N) {
			b.Fatalf("forwarded %d of %d", f.packets.Load(), b.N)
		}
	})
	b.Run("baseline-copy", func(b *testing.B) {
		dst := make([]byte, 1500)
		b.ReportAllocs()
		for i := range b.N {
			binary.BigEndian.PutUint16(pkt[2:], uint16(i))
			copy(dst, pkt)
		}
	})
	b.Run("baseline-naive", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			var p rtp.Packet
			binary.BigEndian.PutUint16(pkt[2:], uint16(i))
			if err := p.Unmarshal(pkt); err != nil {
				b.Fatal(err)
			}
			p.SequenceNumber++
			if _, err := p.Marshal(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The forwarding function allocates nothing, whatever the packet: the
// property the benchmark's 0 allocs/op shows, held as a test.
func TestForwardAllocatesNothing(t *testing.T) {
	pkt := browserPacket(t)
	f := &forwarder{out: &discard{}}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		if i%100 == 0 { // a new source now and then: the rebase allocates nothing either
			binary.BigEndian.PutUint32(pkt[8:], uint32(i))
		}
		_ = f.forward(0, pkt, int64(i)*20e6)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per forwarded packet", allocs)
	}
}

// written keeps what a forwarder wrote.
type written struct {
	seq []uint16
	ts  []uint32
}

func (w *written) WriteRTP(p *rtp.Packet) error {
	w.seq, w.ts = append(w.seq, p.SequenceNumber), append(w.ts, p.Timestamp)
	return nil
}

// A new source (another SSRC, or a reinstalled one) is rebased on its
// first packet: the sequence number goes on by one, the timestamp by the
// wall time since the last packet in whole frames; a gap within a source
// is kept (and counted lost); a replaced source's late packets are not
// written.
func TestForwardRebasesOnNewSource(t *testing.T) {
	w := &written{}
	f := &forwarder{out: w}
	pkt := func(ssrc uint32, seq uint16, ts uint32) []byte {
		b, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, SSRC: ssrc, SequenceNumber: seq, Timestamp: ts}, Payload: []byte{1}}).Marshal()
		return b
	}
	const ms = int64(1e6)
	_ = f.forward(0, pkt(1, 100, 9600), 0)
	_ = f.forward(0, pkt(1, 101, 10560), 20*ms)
	_ = f.forward(0, pkt(1, 103, 12480), 60*ms) // 102 lost
	f.install(1)
	_ = f.forward(0, pkt(1, 104, 13440), 80*ms) // the old source, late: dropped
	_ = f.forward(1, pkt(2, 7, 5), 260*ms)      // 200 ms after the last written: 10 frames
	_ = f.forward(1, pkt(2, 8, 965), 280*ms)
	wantSeq := []uint16{100, 101, 103, 104, 105}
	wantTS := []uint32{9600, 10560, 12480, 12480 + 10*960, 12480 + 11*960}
	if !slices.Equal(w.seq, wantSeq) || !slices.Equal(w.ts, wantTS) {
		t.Fatalf("wrote seq %v ts %v, want %v %v", w.seq, w.ts, wantSeq, wantTS)
	}
	if s := f.stats(); s.Lost != 1 || s.Stale != 1 || s.Packets != 5 {
		t.Fatalf("stats %+v: want 1 lost, 1 stale, 5 forwarded", s)
	}
}

// A receiver report says what arrived since the last one: the loss in
// that interval in 256ths and the cumulative loss; a source that sent
// nothing since gets no report, nor does a new source before its first
// packet. A sender report places now on the output's timeline.
func TestForwarderReports(t *testing.T) {
	f := &forwarder{out: &discard{}}
	pkt := func(ssrc uint32, seq uint16) []byte {
		b, _ := (&rtp.Packet{Header: rtp.Header{Version: 2, SSRC: ssrc, SequenceNumber: seq, Timestamp: uint32(seq) * 960}, Payload: []byte{1, 2}}).Marshal()
		return b
	}
	const ms = int64(1e6)
	if _, ok := f.reception(0); ok {
		t.Fatal("a report before any packet")
	}
	if _, _, _, ok := f.sending(0); ok {
		t.Fatal("a sender report before any packet")
	}
	for i, seq := range []uint16{65534, 65535, 1, 2} { // 0 lost, across the wrap: 1 of 5
		_ = f.forward(0, pkt(7, seq), int64(i+1)*20*ms)
	}
	rep, ok := f.reception(0)
	if !ok || rep.SSRC != 7 || rep.FractionLost != 51 || rep.TotalLost != 1 || rep.LastSequenceNumber != 1<<16+2 {
		t.Fatalf("first report %+v, %v: want 1 of 5 lost (51/256), highest 65538", rep, ok)
	}
	if _, ok := f.reception(0); ok {
		t.Fatal("a second report with nothing new")
	}
	_ = f.forward(0, pkt(7, 3), 100*ms)
	if rep, ok := f.reception(0); !ok || rep.FractionLost != 0 || rep.TotalLost != 1 {
		t.Fatalf("report %+v, %v: want none lost since, 1 in all", rep, ok)
	}
	if packets, octets, ts, ok := f.sending(140 * ms); !ok || packets != 5 || octets != 10 || ts != 3*960+2*960 {
		t.Fatalf("sending: %d packets, %d octets, ts %d, %v: want 5, 10, %d", packets, octets, ts, ok, 5*960)
	}
	f.install(1)
	if _, ok := f.reception(1); ok {
		t.Fatal("a report about a new source before its first packet")
	}
	_ = f.forward(1, pkt(9, 500), 160*ms)
	if rep, ok := f.reception(1); !ok || rep.SSRC != 9 || rep.TotalLost != 0 || rep.LastSequenceNumber != 500 {
		t.Fatalf("the new source's report %+v, %v", rep, ok)
	}
	if _, ok := f.reception(0); ok {
		t.Fatal("a report for the replaced generation")
	}
}
