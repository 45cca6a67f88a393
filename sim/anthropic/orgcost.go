package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// EndpointOrgCost is the Usage and Cost Analytics API's cost report
// (anthropic-sdk-go v2.15.0, Beta.Organizations.Analytics.Cost.List): what
// the organization was billed, in fractional cents.
const EndpointOrgCost = "/v1/organizations/analytics/cost"

// The simulator's own Anthropic price list, from ../shared/reference/models.md
// ("Anthropic", read again 2026-11-28), written as the table prints it in
// dollars per 1M tokens. It is deliberately not the gateway's table
// (billing/prices.yaml): the costs it serves are the provider's side of a
// reconciliation, and a side priced with the ledger's own table could
// never disagree with it (docs/sim.md, "Prices").
//
// Sonnet 5.5's cache read has two prices: $0.20 on its model page, $0.10
// from 2026-10-07 in two third-party tables. The simulator bills by the
// date, as the later tables say (the ledger's dated entry takes the same
// reading from its own source): a request on 6 October reads at $0.20, on
// the 8th at $0.10.
type anthListed struct {
	source string
	// in is uncached input, write5m and write1h a cache write under each
	// TTL, out output; "" is a class the table prints no price for.
	in, write5m, write1h, out string
	// reads are the cache-read prices by the UTC day each applies from,
	// oldest first ("" from the start).
	reads []anthDated
}

type anthDated struct{ from, price string }

func anthropicPrices() map[string]anthListed {
	return map[string]anthListed{
		// Prompts up to 100K tokens (the simulator's are far below).
		"claude-haiku-5-5": {source: "models.md, claude-haiku-5-5 (cache read 3P)",
			in: "0.10", write5m: "0.125", write1h: "0.20", out: "0.50", reads: []anthDated{{"", "0.01"}}},
		"claude-sonnet-5-5": {source: "models.md, claude-sonnet-5-5 (model page; cache read from 2026-10-07 3P)",
			in: "2.00", write5m: "2.50", write1h: "4.00", out: "10.00",
			reads: []anthDated{{"", "0.20"}, {"2026-10-07", "0.10"}}},
		"claude-sonnet-4-5-20250929": {source: "models.md, claude-sonnet-4-5-20250929",
			in: "3.00", out: "15.00"},
	}
}

// anthBilled is one served Message's usage as the price list counts it.
type anthBilled struct {
	at                                    time.Time
	model                                 string
	uncached, read, write5m, write1h, out int64
}

// orgBook keeps every Message billed, for the cost report.
type orgBook struct {
	mu     sync.Mutex
	billed []anthBilled
}

func (b *orgBook) bill(u anthBilled) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.billed = append(b.billed, u)
}

// family is the list's row for model: its own, or its family's for a
// dated snapshot ("claude-sonnet-5-5-20261001").
func family(list map[string]anthListed, model string) (anthListed, bool) {
	if l, ok := list[model]; ok {
		return l, true
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i == 9 {
		l, ok := list[model[:i]]
		return l, ok
	}
	return anthListed{}, false
}

// cents is what u costs at l, in exact cents: n tokens at $p per 1M cost
// n·p/10,000 cents. ok is false for tokens in a class l prints no price
// for: such a Message is billed nothing, and the report shows it.
func (l anthListed) cents(u anthBilled) (*big.Rat, bool) {
	read := ""
	day := u.at.UTC().Format(time.DateOnly)
	for _, d := range l.reads {
		if d.from <= day {
			read = d.price
		}
	}
	sum := new(big.Rat)
	for _, c := range []struct {
		n     int64
		price string
	}{{u.uncached, l.in}, {u.read, read}, {u.write5m, l.write5m}, {u.write1h, l.write1h}, {u.out, l.out}} {
		if c.n == 0 {
			continue
		}
		p, ok := new(big.Rat).SetString(c.price)
		if c.price == "" || !ok {
			return nil, false
		}
		sum.Add(sum, new(big.Rat).Mul(p, big.NewRat(c.n, 10_000)))
	}
	return sum, true
}

// costRow is one row of the cost report: a model's cost over one bucket.
type costRow struct {
	StartingAt time.Time      `json:"starting_at"`
	EndingAt   time.Time      `json:"ending_at"`
	Group      map[string]any `json:"group"`
	Cost       costMetrics    `json:"cost"`
}

type costMetrics struct {
	Amount     string `json:"amount"`
	Currency   string `json:"currency"`
	ListAmount string `json:"list_amount"`
	Requests   int64  `json:"requests"`
}

// OrgCost serves the cost report: the range [starting_at, ending_at),
// grouped by model (group_by[]=model, the only grouping the simulator
// has) and, with time_bucket_width=1d, by UTC day; without it one row a
// model over the whole range. The amounts are exact decimal cents, the
// list amount the same (the simulator's organization has no discount).
func (s *Server) OrgCost(w http.ResponseWriter, r *http.Request) error {
	return s.report(w, r, func(g reportGroup) any {
		sum := new(big.Rat)
		list := anthropicPrices()
		for _, u := range g.billed {
			if l, ok := family(list, u.model); ok {
				if c, ok := l.cents(u); ok {
					sum.Add(sum, c)
				}
			}
		}
		amount := decimal(sum)
		return costRow{StartingAt: g.start, EndingAt: g.end, Group: map[string]any{"model": g.model},
			Cost: costMetrics{Amount: amount, Currency: "USD", ListAmount: amount, Requests: int64(len(g.billed))}}
	})
}

// reportGroup is the Messages billed to one model in one bucket.
type reportGroup struct {
	start, end time.Time
	model      string
	billed     []anthBilled
}

// report serves one of the organization's reports (cost, usage) in
// Anthropic's error shape: the query read, the Messages billed grouped by
// bucket and model, and each group's row made by row, ordered by bucket
// and model, on one page.
func (s *Server) report(w http.ResponseWriter, r *http.Request, row func(reportGroup) any) error {
	w.Header().Set("Request-Id", "req_"+core.RandomID())
	groups, err := s.reportGroups(r)
	if err != nil {
		var ae *anthError
		if !errors.As(err, &ae) {
			return err
		}
		writeAnthError(w, ae)
		return nil
	}
	data := make([]any, 0, len(groups))
	for _, g := range groups {
		data = append(data, row(g))
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false, "next_page": nil,
		"data_refreshed_at": s.env.Now().UTC()})
}

func (s *Server) reportGroups(r *http.Request) ([]reportGroup, error) {
	if err := s.checkKey(r); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	from, err := time.Parse(time.RFC3339, q.Get("starting_at"))
	if err != nil {
		return nil, anthInvalid("starting_at: must be an RFC 3339 date-time")
	}
	to := s.env.Now()
	if v := q.Get("ending_at"); v != "" {
		if to, err = time.Parse(time.RFC3339, v); err != nil {
			return nil, anthInvalid("ending_at: must be an RFC 3339 date-time")
		}
	}
	for _, g := range q["group_by[]"] {
		if g != "model" {
			return nil, anthInvalid(fmt.Sprintf("group_by: %q is not served by the simulator (model only)", g))
		}
	}
	daily := false
	switch q.Get("time_bucket_width") {
	case "":
	case "1d":
		daily = true
	default:
		return nil, anthInvalid("time_bucket_width: the simulator serves 1d only")
	}
	type key struct {
		start time.Time
		model string
	}
	byKey := map[key]*reportGroup{}
	s.org.mu.Lock()
	billed := slices.Clone(s.org.billed)
	s.org.mu.Unlock()
	for _, u := range billed {
		if u.at.Before(from) || !u.at.Before(to) {
			continue
		}
		k, end := key{from, u.model}, to
		if daily {
			k.start = u.at.UTC().Truncate(24 * time.Hour)
			end = k.start.Add(24 * time.Hour)
		}
		if byKey[k] == nil {
			byKey[k] = &reportGroup{start: k.start, end: end, model: u.model}
		}
		byKey[k].billed = append(byKey[k].billed, u)
	}
	out := make([]reportGroup, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b reportGroup) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return strings.Compare(a.model, b.model)
	})
	return out, nil
}

// decimal writes r, a whole number of 1e-8 cents at most (prices have
// three decimals, over 10,000), exactly, with no trailing zeros.
func decimal(r *big.Rat) string {
	s := strings.TrimRight(r.FloatString(8), "0")
	return strings.TrimSuffix(s, ".")
}
