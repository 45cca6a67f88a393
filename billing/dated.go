package billing

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// A model's price can change while the table's version stays: two sources
// may disagree, or a price may move on a known day (Sonnet 5.5's cache read
// is $0.20 per 1M on Anthropic's page and $0.10 from 2026-10-07 in two
// third-party tables). The table keeps each price with its source, under
// `dated:`, and the record's time decides which one prices it, so a
// reprice of last month is not made with this month's rates.

// datedYAML is one entry of a model's `dated:` list: the classes it sets,
// valid from the UTC day `from` on; classes it leaves out keep the model's
// base price.
type datedYAML struct {
	From      string `yaml:"from"`
	priceYAML `yaml:",inline"`
}

// datedPrice is a model's whole price from one day on.
type datedPrice struct {
	from  time.Time
	price ModelPrice
}

// dated resolves y's `dated:` list over base, each entry over the one
// before, sorted by day. Days must be distinct; an entry inside an entry
// is refused.
func (y priceYAML) dated(base ModelPrice) ([]datedPrice, error) {
	if len(y.Dated) == 0 {
		return nil, nil
	}
	entries := append([]datedYAML(nil), y.Dated...)
	days := make([]time.Time, len(entries))
	for i, e := range entries {
		day, err := time.Parse(time.DateOnly, e.From)
		if err != nil {
			return nil, fmt.Errorf("dated: from %q must look like 2006-01-02", e.From)
		}
		if len(e.Dated) > 0 {
			return nil, errors.New("dated: an entry cannot have its own dated list")
		}
		days[i] = day
	}
	idx := make([]int, len(entries))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return days[idx[a]].Before(days[idx[b]]) })
	out := make([]datedPrice, 0, len(entries))
	prev := base
	for n, i := range idx {
		if n > 0 && days[i].Equal(out[n-1].from) {
			return nil, fmt.Errorf("dated: two entries from %s", entries[i].From)
		}
		over, err := entries[i].priceYAML.modelPrice()
		if err != nil {
			return nil, fmt.Errorf("dated from %s: %w", entries[i].From, err)
		}
		merged := prev
		merged.Source, merged.Date = over.Source, over.Date
		for c := range over.has {
			if over.has[c] {
				merged.per1M[c], merged.has[c] = over.per1M[c], true
			}
		}
		if over.HasPerMinute {
			merged.PerMinute, merged.HasPerMinute = over.PerMinute, true
		}
		merged.dated = nil
		out = append(out, datedPrice{from: days[i], price: merged})
		prev = merged
	}
	return out, nil
}

// at is m's price valid at t: the latest dated entry whose day has begun,
// else the base price.
func (m ModelPrice) at(t time.Time) ModelPrice {
	got := m
	for _, d := range m.dated {
		if t.Before(d.from) {
			break
		}
		got = d.price
	}
	got.dated = nil
	return got
}

// At is the table as it prices usage of time t: a record's cost is its
// created_at's price (Ledger.price, Reprice, Detail). The zero time, a
// table's own default, means the time of the call.
func (p *Prices) At(t time.Time) *Prices {
	q := *p
	q.at = t
	return &q
}

// when is the time p prices at.
func (p *Prices) when() time.Time {
	if p.at.IsZero() {
		return time.Now()
	}
	return p.at
}
