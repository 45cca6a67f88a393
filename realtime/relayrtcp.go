package realtime

import (
	"sync"
	"time"

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

// report sends each leg its RTCP (the reporter calls it every
// ReportInterval): a sender report about the audio the relay sends the
// leg, and a receiver report about the audio the leg sends the relay, each
// only if its stream carried something since the leg's last report. A held
// call without audio then sends no RTCP at all; ICE's consent checks keep
// the path.
//
// Loss goes upstream in the receiver reports: each reception report
// carries the loss of the whole path to the final receiver, not just the
// first hop. The relay moves sequence numbers by an offset and never
// renumbers, so a packet lost before the relay is a gap the phone sees
// too: the phone's report about downstream audio already counts both hops.
// Concretely, on the provider leg the reception report about the
// provider's audio says
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
func (r *Relay) report() {
	r.mu.Lock()
	phone, prov := r.phone, r.prov
	r.mu.Unlock()
	now := time.Now()
	r.reportLeg(phone, &r.down, &r.up, &r.upFar, now)
	r.reportLeg(prov, &r.up, &r.down, &r.downFar, now)
}

// reportLeg writes l's reports: sent is the direction the relay sends on
// l, got the one l is the source of, far the final receiver's loss of got.
func (r *Relay) reportLeg(l *leg, sent, got *forwarder, far *farLoss, now time.Time) {
	if l == nil || l.closed.Load() || l.ssrc.Load() == 0 || l.reporting.Load() {
		return // a leg whose last reports are still being written skips a turn
	}
	pkts := make([]rtcp.Packet, 0, 2)
	if packets, octets, ts, ok := sent.sending(monoNow()); ok && l.based.Load() && packets != l.srPackets {
		if base := l.sentBase.Load(); packets > base {
			l.srPackets = packets
			pkts = append(pkts, &rtcp.SenderReport{SSRC: l.ssrc.Load(), NTPTime: ntpTime(now), RTPTime: ts,
				PacketCount: uint32(packets - base), OctetCount: uint32(octets - l.octetBase.Load())})
		}
	}
	if rep, ok := got.reception(l.gen); ok {
		if lsr, at := l.peerSR.Load(), l.peerSRAt.Load(); at != 0 {
			rep.LastSenderReport = lsr
			rep.Delay = uint32((monoNow() - at) << 16 / int64(time.Second))
		}
		if fraction, total, ok := far.get(now); ok {
			mergeLoss(&rep, fraction, total)
		}
		pkts = append(pkts, &rtcp.ReceiverReport{SSRC: l.ssrc.Load(), Reports: []rtcp.ReceptionReport{rep}})
	}
	if len(pkts) == 0 {
		return
	}
	// Written apart: over ICE-TCP a write blocks while the phone's
	// connection stalls (until ICE fails it), and the reporter serves
	// every call of the replica. A leg closing meanwhile refuses it.
	l.reporting.Store(true)
	go func() {
		_ = l.pc.WriteRTCP(pkts)
		l.reporting.Store(false)
	}()
}

// mergeLoss folds the far receiver's loss into one reception report.
func mergeLoss(r *rtcp.ReceptionReport, fraction uint8, total uint32) {
	r.FractionLost = max(r.FractionLost, fraction)
	r.TotalLost = min(0x7fffff, max(r.TotalLost, total)) // 24 bits on the wire
}

// readReports reads the RTCP the peer sends about the relay's stream on
// one leg: its receiver reports give the leg's round-trip time (RFC 3550
// 6.4.1: arrival − LSR − DLSR) and the far loss that report passes
// upstream.
func (r *Relay) readReports(l *leg, s *webrtc.RTPSender, far *farLoss) {
	defer r.wg.Done()
	for {
		pkts, _, err := s.ReadRTCP()
		if err != nil {
			return
		}
		now := time.Now()
		ssrc := l.ssrc.Load()
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

// ntpTime is t as a 64-bit NTP timestamp.
func ntpTime(t time.Time) uint64 {
	const ntpEpochOffset = 2208988800 // 1900 to 1970, in seconds
	secs := uint64(t.Unix()) + ntpEpochOffset
	frac := uint64(t.Nanosecond()) << 32 / uint64(time.Second)
	return secs<<32 | frac
}

// ntpMiddle is the middle 32 bits of t as a 64-bit NTP timestamp.
func ntpMiddle(t time.Time) uint32 { return uint32(ntpTime(t) >> 16) }

// drainRTCP reads the RTCP a leg's peer sends about its own stream: its
// sender reports, whose time the relay's receiver reports on that leg
// echo (LSR, DLSR) so the peer measures its round trip too.
func (r *Relay) drainRTCP(l *leg, rc *webrtc.RTPReceiver) {
	defer r.wg.Done()
	for {
		pkts, _, err := rc.ReadRTCP()
		if err != nil {
			return
		}
		for _, p := range pkts {
			if sr, ok := p.(*rtcp.SenderReport); ok {
				l.peerSR.Store(uint32(sr.NTPTime >> 16))
				l.peerSRAt.Store(monoNow())
			}
		}
	}
}
