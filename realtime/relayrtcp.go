package realtime

import (
	"sync"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"
)

// farLoss is what the receiver at the far end of a direction reports
// about the stream the relay sends it: the phone about downstream audio,
// the provider about upstream audio.
type farLoss struct {
	mu       sync.Mutex
	fraction uint8 // lost in its last interval, in 256ths
	total    uint32
	at       time.Time
}

// farLossTTL is how long a far report counts: past two of RFC 3550's
// 5 s intervals, so a peer that stops reporting stops counting.
const farLossTTL = 12 * time.Second

func (f *farLoss) set(fraction uint8, total uint32, now time.Time) {
	f.mu.Lock()
	f.fraction, f.total, f.at = fraction, total, now
	f.mu.Unlock()
}

func (f *farLoss) get(now time.Time) (fraction uint8, total uint32, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.at.IsZero() || now.Sub(f.at) > farLossTTL {
		return 0, 0, false
	}
	return f.fraction, f.total, true
}

// lossMerge passes loss upstream: the receiver reports the relay sends a
// source (pion's report interceptor writes them every ReportInterval) carry the
// loss of the whole path to the final receiver, not just the first hop.
// The relay moves sequence numbers by an offset and never renumbers, so a
// packet lost before the relay is a gap the phone sees too: the phone's
// report about downstream audio already counts both hops. Concretely, on
// the provider leg each reception report about the provider's audio says
//
//	fraction lost = max(relay's own, phone's), in 256ths
//	cumulative lost = max(relay's own, phone's)
//
// where "phone's" is the phone's latest receiver report about the
// downstream audio the relay sends it (dropped after farLossTTL). So the
// provider's Opus encoder sees the loss its audio meets on the way to the
// phone and raises its in-band FEC for it, as if it were talking to the
// phone directly. The phone leg's reports carry the provider's reports
// about upstream audio the same way.
type lossMerge struct {
	interceptor.NoOp
	far *farLoss
}

type lossMergeFactory struct{ far *farLoss }

func (f lossMergeFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &lossMerge{far: f.far}, nil
}

func (m *lossMerge) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		if fraction, total, ok := m.far.get(time.Now()); ok {
			for _, p := range pkts {
				if rr, ok := p.(*rtcp.ReceiverReport); ok {
					for i := range rr.Reports {
						mergeLoss(&rr.Reports[i], fraction, total)
					}
				}
			}
		}
		return w.Write(pkts, a)
	})
}

// mergeLoss folds the far receiver's loss into one reception report.
func mergeLoss(r *rtcp.ReceptionReport, fraction uint8, total uint32) {
	r.FractionLost = max(r.FractionLost, fraction)
	r.TotalLost = min(0x7fffff, max(r.TotalLost, total)) // 24 bits on the wire
}

// readReports reads the RTCP the peer sends about the relay's stream on
// one leg (pion's interceptors see it only when it is read): its receiver
// reports give the leg's round-trip time (RFC 3550 6.4.1: arrival − LSR −
// DLSR) and the far loss that lossMerge passes upstream.
func (r *Relay) readReports(l *leg, s *webrtc.RTPSender, far *farLoss) {
	defer r.wg.Done()
	ssrc := uint32(0)
	if enc := s.GetParameters().Encodings; len(enc) > 0 {
		ssrc = uint32(enc[0].SSRC)
	}
	for {
		pkts, _, err := s.ReadRTCP()
		if err != nil {
			return
		}
		now := time.Now()
		for _, p := range pkts {
			var reports []rtcp.ReceptionReport
			switch p := p.(type) {
			case *rtcp.ReceiverReport:
				reports = p.Reports
			case *rtcp.SenderReport:
				reports = p.Reports
			}
			for _, rep := range reports {
				if rep.SSRC != ssrc {
					continue
				}
				far.set(rep.FractionLost, rep.TotalLost, now)
				if rtt, ok := reportRTT(rep, now); ok {
					l.rtt.Store(int64(rtt))
				}
			}
		}
	}
}

// reportRTT is the round trip a reception report closes: the middle 32
// bits of now in NTP time, less the sender report it answers and the
// receiver's delay since, in 1/65536 s.
func reportRTT(rep rtcp.ReceptionReport, now time.Time) (time.Duration, bool) {
	if rep.LastSenderReport == 0 {
		return 0, false
	}
	rtt := int32(ntpMiddle(now) - rep.LastSenderReport - rep.Delay)
	if rtt < 0 {
		return 0, false
	}
	return time.Duration(int64(rtt) * int64(time.Second) >> 16), true
}

// ntpMiddle is the middle 32 bits of t as a 64-bit NTP timestamp.
func ntpMiddle(t time.Time) uint32 {
	const ntpEpochOffset = 2208988800 // 1900 to 1970, in seconds
	secs := uint64(t.Unix()) + ntpEpochOffset
	frac := uint64(t.Nanosecond()) << 32 / uint64(time.Second)
	return uint32((secs<<32 | frac) >> 16)
}

// drainRTCP reads a receiver's RTCP so pion's report interceptor sees the
// peer's sender reports (its own reports then carry LSR and DLSR, and the
// peer measures its round trip too).
func (r *Relay) drainRTCP(rc *webrtc.RTPReceiver) {
	defer r.wg.Done()
	for {
		if _, _, err := rc.ReadRTCP(); err != nil {
			return
		}
	}
}

// quietReports drops the reports of streams that carried nothing since
// their last report: a sender report whose packet count has not moved, a
// receiver report whose highest sequence number has not. A held call
// without audio then sends no RTCP at all (its ICE consent checks keep the
// path), where pion's interceptors would write two reports per leg every
// interval; in a relay holding many quiet calls those were most of the
// CPU it spent on them. Reports resume with the media.
type quietReports struct {
	interceptor.NoOp
	mu      sync.Mutex
	sent    map[uint32]uint32 // SSRC → packet count in its last sender report
	highest map[uint32]uint32 // SSRC → highest sequence number in its last receiver report
}

type quietReportsFactory struct{}

func (quietReportsFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &quietReports{sent: map[uint32]uint32{}, highest: map[uint32]uint32{}}, nil
}

func (q *quietReports) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		keep := pkts[:0:0]
		for _, p := range pkts {
			if q.moved(p) {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			return 0, nil
		}
		return w.Write(keep, a)
	})
}

// moved reports whether p says something its last report did not.
func (q *quietReports) moved(p rtcp.Packet) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch p := p.(type) {
	case *rtcp.SenderReport:
		if q.sent[p.SSRC] == p.PacketCount {
			return false
		}
		q.sent[p.SSRC] = p.PacketCount
	case *rtcp.ReceiverReport:
		moved := false
		for _, r := range p.Reports {
			if q.highest[r.SSRC] != r.LastSequenceNumber {
				q.highest[r.SSRC] = r.LastSequenceNumber
				moved = true
			}
		}
		return moved
	}
	return true
}
