package billing

import (
	"context"
	"math"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// ProviderFigures are a provider's own usage and cost for one UTC day and
// model, as its organization Usage and Costs APIs report them.
type ProviderFigures struct {
	Date       string // YYYY-MM-DD, UTC
	Model      string
	Tokens     int64 // input + output
	CostMicros int64
}

// ProviderUsage reads a provider's figures for the UTC days of [from, to).
type ProviderUsage interface {
	Figures(ctx context.Context, from, to time.Time) ([]ProviderFigures, error)
}

// ReconcileRow compares the ledger with the provider for one day and model.
type ReconcileRow struct {
	Model              string `json:"model"`
	LedgerTokens       int64  `json:"ledger_tokens"`
	ProviderTokens     int64  `json:"provider_tokens"`
	TokenDiff          int64  `json:"token_diff"` // ledger − provider
	LedgerCostMicros   int64  `json:"ledger_cost_micros"`
	ProviderCostMicros int64  `json:"provider_cost_micros"`
	CostDiffMicros     int64  `json:"cost_diff_micros"` // ledger − provider
	// Coverage is ledger ÷ provider tokens with four places ("1.0000"),
	// or "" when the provider reports none.
	Coverage string `json:"coverage"`
	Red      bool   `json:"red"`
}

// ReconcileDay is one UTC day: red when any of its models is.
type ReconcileDay struct {
	Date   string         `json:"date"`
	Red    bool           `json:"red"`
	Models []ReconcileRow `json:"models"`
}

// Reconciliation is the body of GET /v1/admin/costs/reconcile.
type Reconciliation struct {
	From            time.Time      `json:"from"`
	To              time.Time      `json:"to"`
	ThresholdMicros int64          `json:"threshold_micros"`
	RedDays         int            `json:"red_days"`
	Days            []ReconcileDay `json:"days"`
	// Freshness is the ledger side's; the provider's figures are as the
	// provider reports them when asked.
	Freshness
}

// DefaultThreshold is the cost difference a day may show and stay green:
// the provider reports dollars as floating point, which can be off by a
// micro-dollar per line.
const DefaultThreshold = 1000

// reconcileSQL: the ledger's text usage (chat turns, completions and
// billed attempts) by UTC day and model, from the rollups of whole days.
// Voice is added from its records (voiceLines).
const reconcileSQL = `WITH src AS (
		SELECT bucket, model, records, tokens_in + tokens_out AS tokens, cost_micros FROM usage_rollups
		WHERE bucket >= $1 AND bucket < $2 AND kind IN ('chat', 'completion', 'attempt')
		UNION ALL -- the shares not folded yet (migration 0081)
		SELECT bucket, model, records, tokens_in + tokens_out, cost_micros FROM usage_rollup_deltas
		WHERE bucket >= $1 AND bucket < $2 AND kind IN ('chat', 'completion', 'attempt'))
	SELECT to_char(bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d, model, sum(tokens)::bigint, sum(cost_micros)::bigint
	FROM src GROUP BY d, model HAVING sum(records) <> 0`

// MaxReconcileDays bounds a reconciliation's range, checked before the
// provider is called: the Costs API returns at most 180 daily buckets a
// page (its limit, 1–180), so the costs are one request and the usage
// (31 a page) six, and a range the provider would refuse or take
// thousands of pages to answer (0001-01-01 to 9999-12-31) is the
// caller's 400, not the provider's outage. The provider's start_time is
// Unix seconds, refused below 0, hence from 1970-01-01 on.
const MaxReconcileDays = 180

// Reconcile compares the ledger with the provider's figures by UTC day and
// model over [from, to), which must be whole UTC days: the provider's
// buckets are. A day is red when a model's tokens differ or its cost
// differs by more than threshold micro-USD.
func (fi *Finance) Reconcile(ctx context.Context, from, to time.Time, p ProviderUsage, threshold int64) (Reconciliation, error) {
	if !from.Equal(from.Truncate(24*time.Hour)) || !to.Equal(to.Truncate(24*time.Hour)) {
		return Reconciliation{}, apierr.New(apierr.InvalidRequest, "from and to must be dates: the provider reports whole UTC days.")
	}
	if from.Before(time.Unix(0, 0)) || to.Sub(from) > MaxReconcileDays*24*time.Hour {
		return Reconciliation{}, apierr.Errorf(apierr.InvalidRequest,
			"A reconciliation covers at most %d days, from 1970-01-01 on: reconcile a longer range in parts.", MaxReconcileDays)
	}
	type key struct{ date, model string }
	rows := map[key]*ReconcileRow{}
	row := func(k key) *ReconcileRow {
		if rows[k] == nil {
			rows[k] = &ReconcileRow{Model: k.model}
		}
		return rows[k]
	}
	var fresh Freshness
	// The ledger's side first, on one connection that is released before
	// the provider is asked (no connection is held across a provider call).
	err := fi.read(ctx, func(c *pgxpool.Conn, fr Freshness) error {
		fresh = fr
		q, err := c.Query(ctx, reconcileSQL, from, to)
		if err != nil {
			return database.Error("billing: reconcile", err)
		}
		for q.Next() {
			var k key
			var tokens, cost int64
			if err := q.Scan(&k.date, &k.model, &tokens, &cost); err != nil {
				q.Close()
				return database.Error("billing: reconcile", err)
			}
			r := row(k)
			r.LedgerTokens, r.LedgerCostMicros = tokens, cost
		}
		q.Close()
		if err := q.Err(); err != nil {
			return database.Error("billing: reconcile", err)
		}
		voice, err := voiceLines(ctx, c, fi.prices, from, to)
		if err != nil {
			return err
		}
		for _, v := range voice {
			r := row(key{v.date, v.model})
			r.LedgerTokens += v.tokens
			r.LedgerCostMicros += v.costMicros
		}
		return nil
	})
	if err != nil {
		return Reconciliation{}, err
	}
	figures, err := p.Figures(ctx, from, to)
	if err != nil {
		return Reconciliation{}, apierr.Wrap(apierr.AIUnavailable, "The provider's usage could not be read; try again shortly.", err)
	}
	for _, f := range figures {
		r := row(key{f.Date, f.Model})
		r.ProviderTokens += f.Tokens
		r.ProviderCostMicros += f.CostMicros
	}
	out := Reconciliation{From: from, To: to, ThresholdMicros: threshold, Days: []ReconcileDay{}, Freshness: fresh}
	byDay := map[string]*ReconcileDay{}
	for k, r := range rows {
		r.TokenDiff = r.LedgerTokens - r.ProviderTokens
		r.CostDiffMicros = r.LedgerCostMicros - r.ProviderCostMicros
		if r.ProviderTokens > 0 {
			r.Coverage = new(big.Rat).SetFrac64(r.LedgerTokens, r.ProviderTokens).FloatString(4)
		}
		r.Red = r.TokenDiff != 0 || abs(r.CostDiffMicros) > threshold
		d := byDay[k.date]
		if d == nil {
			d = &ReconcileDay{Date: k.date}
			byDay[k.date] = d
		}
		d.Models = append(d.Models, *r)
		d.Red = d.Red || r.Red
	}
	for _, d := range byDay {
		sort.Slice(d.Models, func(i, j int) bool { return d.Models[i].Model < d.Models[j].Model })
		out.Days = append(out.Days, *d)
		if d.Red {
			out.RedDays++
		}
	}
	sort.Slice(out.Days, func(i, j int) bool { return out.Days[i].Date < out.Days[j].Date })
	return out, nil
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// HandleReconcile serves GET /v1/admin/costs/reconcile?from&to&tz&
// threshold_micros with p, the configured provider's usage (nil: none is
// configured, 503).
func (fi *Finance) HandleReconcile(p ProviderUsage) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, q, err := parseFilter(r, time.Now(), "threshold_micros")
		if err != nil {
			return err
		}
		if f.zone().String() != "UTC" || f.UserID != "" || f.Kind != "" || f.Mode != "" || f.Model != "" {
			return apierr.New(apierr.InvalidRequest, "Reconciliation is by the provider's UTC days and every model: give only from, to and threshold_micros.")
		}
		threshold, err := ParseThreshold(q.Get("threshold_micros"))
		if err != nil {
			return err
		}
		if p == nil {
			return apierr.New(apierr.AIFeatureDisabled, "No provider is configured to reconcile against.")
		}
		rec, err := fi.Reconcile(r.Context(), f.From, f.To, p, threshold)
		if err != nil {
			return err
		}
		httpx.WriteJSON(w, http.StatusOK, rec)
		return nil
	}
}

// ParseThreshold reads a threshold in micro-USD; empty is DefaultThreshold.
func ParseThreshold(s string) (int64, error) {
	if s == "" {
		return DefaultThreshold, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/2 {
		return 0, apierr.New(apierr.InvalidRequest, "threshold_micros must be a whole number of micro-USD, 0 or more.")
	}
	return n, nil
}

// ProviderList is several providers' figures as one (OpenAI's and
// Anthropic's): each names its own models, so their rows never meet.
type ProviderList []ProviderUsage

// Figures reads every provider's, in order; the first failure is the
// reconciliation's.
func (l ProviderList) Figures(ctx context.Context, from, to time.Time) ([]ProviderFigures, error) {
	var out []ProviderFigures
	for _, p := range l {
		f, err := p.Figures(ctx, from, to)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
	}
	return out, nil
}
