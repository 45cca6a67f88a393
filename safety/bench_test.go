package safety

import (
	"encoding/json"
	"strings"
	"testing"
)

// reply400 is a realistic 400-token answer (about 1,600 characters, 19
// sentences) of the seeds' domain, without a claim or PII, so every
// sentence is checked by every rule.
var reply400 = strings.Repeat("Here is a simple plan for the week, built around quick meals and short walks. "+
	"Start the day with oats, berries and a spoon of yogurt, about 420 kcal in total. "+
	"For lunch, a lentil salad with feta and mint keeps well for three days. "+
	"Dinner can be a tray of roasted vegetables with chickpeas and a squeeze of lemon. "+
	"Try a 20-minute walk after dinner; many people find it helps them unwind. "+
	"Drink water through the day, and keep a snack like almonds in your bag. ", 3) +
	"That's the plan. Enjoy it."

// tokens cuts text into deltas of about four bytes, as a model streams.
func tokens(text string) []string {
	var out []string
	for len(text) > 4 {
		out = append(out, text[:4])
		text = text[4:]
	}
	return append(out, text)
}

// BenchmarkOutputFilter streams reply400 token by token. "off" encodes
// each delta as its content event, the work a turn does per delta anyway;
// "on" runs the filter and encodes what it releases. Reported: the
// filter's cost per sentence and per content event (on minus off, per
// piece), beside the baseline's per-delta cost.
func BenchmarkOutputFilter(b *testing.B) {
	deltas := tokens(reply400)
	sentences := len(Sentences(reply400))
	o := Options{DisplayName: "Alice Secretname"}
	encode := func(s string) {
		_, _ = json.Marshal(map[string]string{"type": "content", "content": s})
	}
	var off float64
	b.Run("filters=off", func(b *testing.B) {
		for b.Loop() {
			for _, d := range deltas {
				encode(d)
			}
		}
		off = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(off/float64(len(deltas)), "ns/delta")
	})
	b.Run("filters=on", func(b *testing.B) {
		events := 0
		for b.Loop() {
			f := NewFilter(o)
			events = 0
			for _, d := range deltas {
				if out := f.Write(d); out != "" {
					encode(out)
					events++
				}
			}
			if out := f.Close(); out != "" {
				encode(out)
				events++
			}
			if f.Verdict().Outcome != Pass {
				b.Fatal("the benchmark reply was stopped")
			}
		}
		on := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(on/float64(sentences)/1000, "µs/sentence")
		b.ReportMetric(on/float64(events)/1000, "µs/content-event")
		b.ReportMetric(float64(events), "content-events")
		if off > 0 {
			b.ReportMetric((on-off)/float64(sentences)/1000, "added-µs/sentence")
		}
	})
}
