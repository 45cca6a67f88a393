package realtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// Leg names one side of a relayed call.
type Leg int

const (
	// LegPhone is the app's peer: the relay answers its offer.
	LegPhone Leg = iota
	// LegProvider is the relay's own call to the provider.
	LegProvider
)

func (l Leg) String() string {
	if l == LegPhone {
		return "phone"
	}
	return "provider"
}

func (l Leg) other() Leg { return 1 - l }

// RelayEventKind is what happened to a relayed call.
type RelayEventKind string

const (
	// EventLegSilent: no RTP from the leg for SilenceTimeout (or none
	// since it connected).
	EventLegSilent RelayEventKind = "leg_silent"
	// EventLegResumed: RTP again after EventLegSilent.
	EventLegResumed RelayEventKind = "leg_resumed"
	// EventLegClosed: the leg's connection failed (ICE) or closed (DTLS
	// close, Close), or the provider leg did not connect in time. Detail
	// is the pion state, or DetailConnectTimeout.
	EventLegClosed RelayEventKind = "leg_closed"
	// EventChannelClosed: the leg's oai-events channel closed.
	EventChannelClosed RelayEventKind = "channel_closed"
	// EventMessageRefused: a data-channel message from the leg was larger
	// than the other leg takes; the phone got an error event instead.
	EventMessageRefused RelayEventKind = "message_refused"
)

// DetailConnectTimeout is EventLegClosed's detail for a provider leg that
// did not connect within RelayParams.ConnectTimeout.
const DetailConnectTimeout = "connect_timeout"

// RelayEvent is reported to RelayParams.OnEvent.
type RelayEvent struct {
	Kind   RelayEventKind
	Leg    Leg
	Detail string
}

// DefaultSilenceTimeout is how long a leg may send no RTP before
// EventLegSilent: Opus on the Realtime API sends a packet every 20 ms
// while the call is up, even in silence (DTX is not negotiated).
const DefaultSilenceTimeout = 2 * time.Second

// DefaultConnectTimeout bounds how long the provider leg may take to
// connect once the provider answered. ICE between the relay and the
// provider, both at public addresses, takes a few round trips; a provider
// that went away before it connected would otherwise be found only when
// ICE gives up checking (the disconnected and failed timeouts, 30 s).
const DefaultConnectTimeout = 5 * time.Second

// DefaultReportInterval is RFC 3550's recommended minimum RTCP interval
// (6.2). Reports cost every held call CPU whether it carries audio or not,
// and an Opus encoder adapts to loss over seconds, not per report.
const DefaultReportInterval = 5 * time.Second

// RelayParams configure one relayed call.
type RelayParams struct {
	// Network is the replica's shared listeners and ICE settings.
	Network *Network
	// Dial places the provider leg: it sends the relay's offer to the
	// provider (Client.CreateCall with the session) and returns the call.
	Dial func(ctx context.Context, offer string) (Call, error)
	// Intercept sees every oai-events message before it is relayed; nil
	// forwards everything. It runs on pion's data-channel goroutine, one
	// message at a time per leg: it must not block.
	Intercept func(from Leg, msg []byte) Verdict
	// OnEvent hears what happens to the call. It is called on a goroutine
	// of its own, so it may call Close or ReplaceProvider.
	OnEvent func(RelayEvent)
	// SilenceTimeout: 0 means DefaultSilenceTimeout.
	SilenceTimeout time.Duration
	// ConnectTimeout: 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// ReportInterval is how often each leg sends its sender and receiver
	// reports; 0 means DefaultReportInterval.
	ReportInterval time.Duration
	// Interceptors, when set, adds interceptors to a leg (the relay
	// registers none of its own): tests inject loss and capture the RTCP
	// the relay writes with it.
	Interceptors func(Leg) []interceptor.Factory
}

// Relay joins a phone's WebRTC peer and the relay's own call to the
// provider: Opus RTP both ways without decoding (forwarder), each leg with
// its own sender and receiver reports (relayrtcp.go), and the oai-events
// data channel through Intercept (relaydc.go).
type Relay struct {
	p       RelayParams
	silence time.Duration

	up, down    forwarder // up: phone → provider; down: provider → phone
	upFar       farLoss   // the provider's reports about upstream audio
	downFar     farLoss   // the phone's reports about downstream audio
	upTrack     *webrtc.TrackLocalStaticRTP
	downTrack   *webrtc.TrackLocalStaticRTP
	wg          sync.WaitGroup
	mu          sync.Mutex
	phone, prov *leg
	gen         uint64
	answered    bool
	closed      bool
	pending     [2]held // events waiting for a leg's channel, by the leg they go to

	// The reporter's schedule (relayreport.go), under its lock.
	nextReport time.Time
	reportAt   int
}

// ErrRelayClosed is returned by a closed relay.
var ErrRelayClosed = errors.New("realtime: relay closed")

// NewRelay checks p and builds a relay; Answer starts it.
func NewRelay(p RelayParams) (*Relay, error) {
	if p.Network == nil || p.Dial == nil {
		return nil, errors.New("realtime: relay needs a Network and a Dial")
	}
	r := &Relay{p: p, silence: p.SilenceTimeout, reportAt: -1}
	if r.silence <= 0 {
		r.silence = DefaultSilenceTimeout
	}
	if r.p.ConnectTimeout <= 0 {
		r.p.ConnectTimeout = DefaultConnectTimeout
	}
	if r.p.ReportInterval <= 0 {
		r.p.ReportInterval = DefaultReportInterval
	}
	var err error
	if r.upTrack, err = webrtc.NewTrackLocalStaticRTP(opusCapability(), "audio", "voxgate"); err != nil {
		return nil, err
	}
	if r.downTrack, err = webrtc.NewTrackLocalStaticRTP(opusCapability(), "audio", "voxgate"); err != nil {
		return nil, err
	}
	r.up.out, r.down.out = r.upTrack, r.downTrack
	return r, nil
}

// Answer places the provider leg, then answers the phone's offer with
// every candidate gathered (the phone gets no trickle). A provider refusal
// comes back as Dial's error, before the phone leg exists.
func (r *Relay) Answer(ctx context.Context, offer string) (string, error) {
	r.mu.Lock()
	if r.answered || r.closed {
		r.mu.Unlock()
		return "", errors.New("realtime: relay already answered")
	}
	r.answered = true
	r.gen++
	gen := r.gen
	r.mu.Unlock()
	r.down.install(gen)
	prov, err := r.dialProvider(ctx, gen)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.prov = prov
	r.mu.Unlock()
	phone, answer, err := r.answerPhone(ctx, offer)
	if err != nil {
		prov.close()
		return "", err
	}
	r.mu.Lock()
	r.phone = phone
	closed := r.closed
	if !closed { // under r.mu: a Close after this unschedules it
		r.p.Network.reports.add(r)
	}
	r.mu.Unlock()
	if closed {
		phone.close()
		prov.close()
		return "", ErrRelayClosed
	}
	return answer, nil
}

// ICEServers are the servers the phone should be handed with the answer.
func (r *Relay) ICEServers() []webrtc.ICEServer { return r.p.Network.ICEServers() }

// CallID is the provider call now carrying the session.
func (r *Relay) CallID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prov == nil {
		return ""
	}
	return r.prov.callID
}

// ReplaceProvider places a new provider leg and closes the old one. The
// phone's leg and channel stay up; downstream audio rebases on the new
// source's first packet, so the phone hears one continuous stream, and
// phone events wait for the new channel (up to maxPending).
func (r *Relay) ReplaceProvider(ctx context.Context) error {
	r.mu.Lock()
	if r.closed || r.prov == nil {
		r.mu.Unlock()
		return ErrRelayClosed
	}
	r.gen++
	gen, old := r.gen, r.prov
	old.retired.Store(true)
	r.mu.Unlock()
	r.down.install(gen) // the old source's late packets are not forwarded
	nl, err := r.dialProvider(ctx, gen)
	if err != nil {
		return fmt.Errorf("realtime: replace the provider leg: %w", err)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		nl.close()
		return ErrRelayClosed
	}
	r.prov = nl
	r.mu.Unlock()
	old.close()
	return nil
}

// Close ends both legs and waits for the relay's readers. Not from
// Intercept (OnEvent runs apart and may call it).
func (r *Relay) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.wg.Wait()
		return
	}
	r.closed = true
	legs := []*leg{r.phone, r.prov}
	r.mu.Unlock()
	r.p.Network.reports.remove(r)
	for _, l := range legs {
		if l != nil {
			l.retired.Store(true)
			l.close()
		}
	}
	r.wg.Wait()
}

// event reports ev apart from the goroutine that saw it, so OnEvent may
// close or replace the leg it is told about.
func (r *Relay) event(l *leg, kind RelayEventKind, detail string) {
	if r.p.OnEvent == nil || l.retired.Load() {
		return
	}
	go r.p.OnEvent(RelayEvent{Kind: kind, Leg: l.which, Detail: detail})
}

// LegStats are one leg's transport figures.
type LegStats struct {
	// RTT is the round trip from the peer's receiver reports; 0 until one
	// answers a sender report (a peer that sends none, like the
	// simulator, leaves it 0).
	RTT time.Duration
	// ICERTT is the round trip of ICE's latest connectivity check on the
	// selected pair: measured on every leg, every few seconds.
	ICERTT time.Duration
	// ReportedLoss is the fraction (0–1) the peer's latest receiver report
	// gives for the audio the relay sends it; ReportedLost its
	// cumulative count.
	ReportedLoss float64
	ReportedLost uint32
	CallID       string
}

// RelayStats are a relayed call's figures.
type RelayStats struct {
	Up, Down        FlowStats // phone → provider, provider → phone
	Phone, Provider LegStats
}

// Stats reads the call's counters.
func (r *Relay) Stats() RelayStats {
	r.mu.Lock()
	phone, prov := r.phone, r.prov
	r.mu.Unlock()
	s := RelayStats{Up: r.up.stats(), Down: r.down.stats()}
	now := time.Now()
	s.Phone = phone.stats(&r.downFar, now)
	s.Provider = prov.stats(&r.upFar, now)
	return s
}
