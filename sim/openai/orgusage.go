package openai

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// The organization Usage and Costs APIs (DESIGN §14), served from what the
// simulator billed, so that a gateway's ledger can be reconciled against
// the provider's own figures (docs/billing.md, "Reconciliation").
const (
	EndpointOrgUsageCompletions = "/v1/organization/usage/completions"
	EndpointOrgCosts            = "/v1/organization/costs"
)

const day = 24 * time.Hour

// orgKey is a UTC day and a model: the finest the costs API reports.
type orgKey struct {
	day   int64 // the day's start, Unix seconds
	model string
}

type orgFigures struct {
	requests, input, cached, cacheWrite, output int64
	inputAudio, cachedAudio, outputAudio        int64 // the audio part of each
	costMicros                                  int64
}

// tokens reports whether the figures hold any tokens: a model billed by
// duration alone (GPT-Live's seconds, whisper's minutes) has none, and the
// completions usage does not list it; its dollars are in the costs.
func (f orgFigures) tokens() bool { return f.input+f.output > 0 }

// OrgBook is what the simulator billed, by UTC day and model. Costs are
// priced per request with the simulator's own price list (orgprices.go),
// as a provider bills.
type OrgBook struct {
	mu     sync.Mutex
	prices priceList
	days   map[orgKey]*orgFigures
}

func newOrgBook() *OrgBook {
	p, err := readPrices(openAIPrices())
	if err != nil {
		panic(err.Error()) // a typo in the table, which TestPriceListReads catches
	}
	return &OrgBook{prices: p, days: map[orgKey]*orgFigures{}}
}

// Bill adds one request's usage of model, billed at now: a chat
// completion, a Realtime response (response.done's usage), a
// transcription, or a GPT-Live session's seconds when it closes. Each is
// priced and rounded on its own, as a request is.
func (b *OrgBook) Bill(now time.Time, model string, u OrgUsage) {
	var cost int64
	if r, ok := b.prices.of(model); ok {
		cost, _ = r.cost(u) // a class the list does not price bills nothing; its tokens still count
	}
	k := orgKey{now.UTC().Truncate(day).Unix(), model}
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.days[k]
	if f == nil {
		f = &orgFigures{}
		b.days[k] = f
	}
	f.requests++
	f.input += u.TextIn + u.AudioIn + u.ImageIn
	f.cached += u.TextCached + u.AudioCached + u.ImageCached
	f.cacheWrite += u.cacheWrite
	f.output += u.TextOut + u.AudioOut
	f.inputAudio += u.AudioIn - u.AudioCached
	f.cachedAudio += u.AudioCached
	f.outputAudio += u.AudioOut
	f.costMicros += cost
}

// orgQuery is the shared part of both routes' queries: a range of whole
// UTC days, a bucket limit and a page (the next bucket's start).
type orgQuery struct {
	start, end int64
	limit      int
	groupBy    []string
}

func parseOrgQuery(q url.Values, maxLimit int, groups ...string) (orgQuery, error) {
	var o orgQuery
	var err error
	if o.start, err = strconv.ParseInt(q.Get("start_time"), 10, 64); err != nil || o.start < 0 {
		return o, core.ErrInvalidRequest("start_time", "start_time must be Unix seconds.")
	}
	o.end = math.MaxInt64 / 2
	if s := q.Get("end_time"); s != "" {
		if o.end, err = strconv.ParseInt(s, 10, 64); err != nil || o.end <= o.start {
			return o, core.ErrInvalidRequest("end_time", "end_time must be Unix seconds after start_time.")
		}
	}
	if p := q.Get("page"); p != "" {
		if o.start, err = strconv.ParseInt(p, 10, 64); err != nil {
			return o, core.ErrInvalidRequest("page", "page is not a cursor this API gave.")
		}
	}
	if w := q.Get("bucket_width"); w != "" && w != "1d" {
		return o, core.ErrInvalidValue("bucket_width", "The simulator serves bucket_width 1d.")
	}
	o.limit = 7
	if s := q.Get("limit"); s != "" {
		if o.limit, err = strconv.Atoi(s); err != nil || o.limit < 1 || o.limit > maxLimit {
			return o, core.ErrInvalidRequest("limit", "limit must be from 1 to "+strconv.Itoa(maxLimit)+".")
		}
	}
	o.groupBy = append(q["group_by[]"], q["group_by"]...)
	for _, g := range o.groupBy {
		if !slices.Contains(groups, g) {
			return o, core.ErrInvalidValue("group_by", "The simulator groups by "+groups[0]+" only.")
		}
	}
	return o, nil
}

type orgPage struct {
	Object   string      `json:"object"`
	Data     []orgBucket `json:"data"`
	HasMore  bool        `json:"has_more"`
	NextPage *string     `json:"next_page"`
}

type orgBucket struct {
	Object    string `json:"object"`
	StartTime int64  `json:"start_time"`
	EndTime   int64  `json:"end_time"`
	Results   []any  `json:"results"`
}

type orgUsageResult struct {
	Object              string  `json:"object"`
	InputTokens         int64   `json:"input_tokens"`
	InputCachedTokens   int64   `json:"input_cached_tokens"`
	InputCacheWriteToks int64   `json:"input_cache_write_tokens"`
	InputUncachedTokens int64   `json:"input_uncached_tokens"`
	OutputTokens        int64   `json:"output_tokens"`
	InputAudioTokens    int64   `json:"input_audio_tokens"`
	InputCachedAudio    int64   `json:"input_cached_audio_tokens"`
	OutputAudioTokens   int64   `json:"output_audio_tokens"`
	NumModelRequests    int64   `json:"num_model_requests"`
	Model               *string `json:"model"`
	ProjectID           *string `json:"project_id"`
	UserID              *string `json:"user_id"`
	APIKeyID            *string `json:"api_key_id"`
	Batch               *bool   `json:"batch"`
}

type orgCostResult struct {
	Object    string    `json:"object"`
	Amount    orgAmount `json:"amount"`
	LineItem  *string   `json:"line_item"`
	ProjectID *string   `json:"project_id"`
}

type orgAmount struct {
	Value    float64 `json:"value"`
	Currency string  `json:"currency"`
}

// buckets renders the days of o, each with result(day's figures by model)
// — by model when grouped, else one total; keep leaves out figures the
// route does not report.
func (b *OrgBook) buckets(o orgQuery, grouped bool, keep func(orgFigures) bool, result func(model string, f orgFigures) any) orgPage {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := orgPage{Object: "page", Data: []orgBucket{}}
	first := time.Unix(o.start, 0).UTC().Truncate(day).Unix()
	for d := first; d < o.end; d += int64(day / time.Second) {
		if len(p.Data) == o.limit {
			next := strconv.FormatInt(d, 10)
			p.HasMore, p.NextPage = true, &next
			break
		}
		byModel := map[string]orgFigures{}
		for k, f := range b.days {
			if k.day == d && keep(*f) {
				key := ""
				if grouped {
					key = k.model
				}
				t := byModel[key]
				byModel[key] = t.add(*f)
			}
		}
		models := make([]string, 0, len(byModel))
		for m := range byModel {
			models = append(models, m)
		}
		sort.Strings(models)
		bk := orgBucket{Object: "bucket", StartTime: d, EndTime: d + int64(day/time.Second), Results: []any{}}
		for _, m := range models {
			bk.Results = append(bk.Results, result(m, byModel[m]))
		}
		p.Data = append(p.Data, bk)
	}
	return p
}

func (s *Server) OrgUsageCompletions(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	o, err := parseOrgQuery(r.URL.Query(), 31, "model")
	if err != nil {
		return err
	}
	grouped := len(o.groupBy) > 0
	core.WriteJSON(w, http.StatusOK, s.Org.buckets(o, grouped, orgFigures.tokens, func(model string, f orgFigures) any {
		res := orgUsageResult{Object: "organization.usage.completions.result", InputTokens: f.input, InputCachedTokens: f.cached,
			InputCacheWriteToks: f.cacheWrite, InputUncachedTokens: f.input - f.cached - f.cacheWrite,
			OutputTokens: f.output, InputAudioTokens: f.inputAudio, InputCachedAudio: f.cachedAudio,
			OutputAudioTokens: f.outputAudio, NumModelRequests: f.requests}
		if grouped {
			res.Model = &model
		}
		return res
	}))
	return nil
}

// OrgCosts: the line item is the model's name, the figure it is billed
// under; amounts are dollars.
func (s *Server) OrgCosts(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	o, err := parseOrgQuery(r.URL.Query(), 180, "line_item")
	if err != nil {
		return err
	}
	grouped := len(o.groupBy) > 0
	core.WriteJSON(w, http.StatusOK, s.Org.buckets(o, grouped, func(orgFigures) bool { return true }, func(model string, f orgFigures) any {
		res := orgCostResult{Object: "organization.costs.result", Amount: orgAmount{Value: float64(f.costMicros) / 1e6, Currency: "usd"}}
		if grouped {
			res.LineItem = &model
		}
		return res
	}))
	return nil
}

func (f orgFigures) add(g orgFigures) orgFigures {
	return orgFigures{requests: f.requests + g.requests, input: f.input + g.input, cached: f.cached + g.cached,
		cacheWrite: f.cacheWrite + g.cacheWrite, output: f.output + g.output, inputAudio: f.inputAudio + g.inputAudio,
		cachedAudio: f.cachedAudio + g.cachedAudio, outputAudio: f.outputAudio + g.outputAudio, costMicros: f.costMicros + g.costMicros}
}
