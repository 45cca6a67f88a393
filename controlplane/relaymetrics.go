package controlplane

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/realtime"
)

// relayRegistry is this replica's relayed calls and their metrics. The
// transport figures are read from each relay's Stats at a scrape, not kept
// up per packet: a relayed call costs the metrics nothing between scrapes.
// A call's figures are folded into the totals when it closes.
type relayRegistry struct {
	mu      sync.Mutex
	live    map[*relayLink]struct{}
	retired realtime.RelayStats // the closed calls' flows, summed

	dropped *prometheus.CounterVec // phone events not relayed, by type
	events  *prometheus.CounterVec // the relay's events, by kind and leg
}

func (g *relayRegistry) register(reg prometheus.Registerer) error {
	g.live = map[*relayLink]struct{}{}
	g.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "voxgate_voice_relay_events_dropped_total",
		Help: "Events from relayed phones not relayed to the provider (they would change what the gateway sets), by type."}, []string{"type"})
	g.events = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "voxgate_voice_relay_leg_events_total",
		Help: "What happened to relayed calls' legs: leg_silent, leg_resumed, leg_closed, channel_closed, message_refused."}, []string{"kind", "leg"})
	for _, c := range []prometheus.Collector{g.dropped, g.events, relayCollector{g}} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (g *relayRegistry) add(l *relayLink) {
	g.mu.Lock()
	g.live[l] = struct{}{}
	g.mu.Unlock()
}

// remove folds a closing call's final flows into the totals.
func (g *relayRegistry) remove(l *relayLink) {
	st := l.r.Stats()
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.live[l]; !ok {
		return
	}
	delete(g.live, l)
	addFlow(&g.retired.Up, st.Up)
	addFlow(&g.retired.Down, st.Down)
}

func addFlow(to *realtime.FlowStats, f realtime.FlowStats) {
	to.Packets += f.Packets
	to.Bytes += f.Bytes
	to.Lost += f.Lost
	for i := range f.Latency {
		to.Latency[i] += f.Latency[i]
	}
	to.LatencySum += f.LatencySum
}

// snapshot is every live call's figures and the totals with them.
func (g *relayRegistry) snapshot() (total realtime.RelayStats, each []realtime.RelayStats) {
	g.mu.Lock()
	links := make([]*relayLink, 0, len(g.live))
	for l := range g.live {
		links = append(links, l)
	}
	total = g.retired
	g.mu.Unlock()
	for _, l := range links {
		st := l.r.Stats()
		each = append(each, st)
		addFlow(&total.Up, st.Up)
		addFlow(&total.Down, st.Down)
	}
	return total, each
}

// Relayed is how many relayed calls this replica carries.
func (s *Service) Relayed() int {
	s.relays.mu.Lock()
	defer s.relays.mu.Unlock()
	return len(s.relays.live)
}

var (
	relaySessionsDesc = prometheus.NewDesc("voxgate_voice_relay_sessions", "Relayed calls this replica carries.", nil, nil)
	relayPacketsDesc  = prometheus.NewDesc("voxgate_voice_relay_packets_total",
		"RTP packets relayed, by direction (up: phone to provider; down: provider to phone).", []string{"direction"}, nil)
	relayBytesDesc = prometheus.NewDesc("voxgate_voice_relay_bytes_total", "RTP bytes relayed, by direction.", []string{"direction"}, nil)
	relayLostDesc  = prometheus.NewDesc("voxgate_voice_relay_packets_lost_total",
		"Packets the sources' sequence numbers say never reached the relay, by direction.", []string{"direction"}, nil)
	relayRTTDesc = prometheus.NewDesc("voxgate_voice_relay_rtt_seconds",
		"The live relayed calls' round trips at the scrape, by leg (ICE consent checks; every leg measures them).", []string{"leg"}, nil)
	relayLatencyDesc = prometheus.NewDesc("voxgate_voice_relay_forward_seconds",
		"Each relayed packet's time in the relay, from its read off one leg to its write on the other, by direction.", []string{"direction"}, nil)
	relayJitterDesc = prometheus.NewDesc("voxgate_voice_relay_jitter_seconds",
		"The live relayed calls' interarrival jitter (RFC 3550) at the scrape, by direction.", []string{"direction"}, nil)
)

// relayBuckets span a loopback round trip to an intercontinental one.
var relayBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 1}

// relayCollector reads the relays at each scrape.
type relayCollector struct{ g *relayRegistry }

func (c relayCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{relaySessionsDesc, relayPacketsDesc, relayBytesDesc, relayLostDesc, relayRTTDesc, relayJitterDesc, relayLatencyDesc} {
		ch <- d
	}
}

func (c relayCollector) Collect(ch chan<- prometheus.Metric) {
	total, each := c.g.snapshot()
	ch <- prometheus.MustNewConstMetric(relaySessionsDesc, prometheus.GaugeValue, float64(len(each)))
	for _, d := range []struct {
		name string
		f    realtime.FlowStats
	}{{"up", total.Up}, {"down", total.Down}} {
		ch <- prometheus.MustNewConstMetric(relayPacketsDesc, prometheus.CounterValue, float64(d.f.Packets), d.name)
		ch <- prometheus.MustNewConstMetric(relayBytesDesc, prometheus.CounterValue, float64(d.f.Bytes), d.name)
		ch <- prometheus.MustNewConstMetric(relayLostDesc, prometheus.CounterValue, float64(d.f.Lost), d.name)
		counts, n := make(map[float64]uint64, len(realtime.ForwardBuckets)), uint64(0)
		for i, b := range realtime.ForwardBuckets {
			n += d.f.Latency[i]
			counts[b.Seconds()] = n
		}
		n += d.f.Latency[len(realtime.ForwardBuckets)]
		ch <- prometheus.MustNewConstHistogram(relayLatencyDesc, n, d.f.LatencySum.Seconds(), counts, d.name)
	}
	hist := func(desc *prometheus.Desc, label string, value func(realtime.RelayStats) float64) {
		counts := make(map[float64]uint64, len(relayBuckets))
		var sum float64
		for _, st := range each {
			v := value(st)
			sum += v
			for _, b := range relayBuckets {
				if v <= b {
					counts[b]++
				}
			}
		}
		ch <- prometheus.MustNewConstHistogram(desc, uint64(len(each)), sum, counts, label)
	}
	hist(relayRTTDesc, "phone", func(st realtime.RelayStats) float64 { return legRTT(st.Phone).Seconds() })
	hist(relayRTTDesc, "provider", func(st realtime.RelayStats) float64 { return legRTT(st.Provider).Seconds() })
	hist(relayJitterDesc, "up", func(st realtime.RelayStats) float64 { return st.Up.Jitter.Seconds() })
	hist(relayJitterDesc, "down", func(st realtime.RelayStats) float64 { return st.Down.Jitter.Seconds() })
}

// legRTT is the leg's RTCP round trip when its peer answers sender
// reports (a browser, OpenAI), else ICE's.
func legRTT(l realtime.LegStats) time.Duration {
	if l.RTT > 0 {
		return l.RTT
	}
	return l.ICERTT
}
