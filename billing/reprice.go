package billing

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// maxPriceTable bounds a posted price table: the embedded one is a few
// kilobytes.
const maxPriceTable = 256 << 10

// RepriceRow is one model's figures under the stored and the proposed
// prices. Totals are of priced records; a record priced under one table
// and not the other is counted in the unpriced of the other.
type RepriceRow struct {
	Model       string   `json:"model"`
	Records     int64    `json:"records"`
	OldCost     *big.Int `json:"old_cost_micros"`
	NewCost     *big.Int `json:"new_cost_micros"`
	Difference  *big.Int `json:"difference_micros"` // new − old, may be negative
	OldUnpriced int64    `json:"old_unpriced"`
	NewUnpriced int64    `json:"new_unpriced"`
}

func newRepriceRow(model string) *RepriceRow {
	return &RepriceRow{Model: model, OldCost: new(big.Int), NewCost: new(big.Int), Difference: new(big.Int)}
}

func (r *RepriceRow) add(o *RepriceRow) {
	r.Records += o.Records
	r.OldCost.Add(r.OldCost, o.OldCost)
	r.NewCost.Add(r.NewCost, o.NewCost)
	r.Difference.Sub(r.NewCost, r.OldCost)
	r.OldUnpriced += o.OldUnpriced
	r.NewUnpriced += o.NewUnpriced
}

// Repricing is the body of POST /v1/admin/costs/reprice.
type Repricing struct {
	From       time.Time     `json:"from"`
	To         time.Time     `json:"to"`
	TZ         string        `json:"tz"`
	NewVersion string        `json:"new_version"`
	Models     []*RepriceRow `json:"models"`
	Total      *RepriceRow   `json:"total"`
}

// Reprice prices the filter's records again with p, record by record with
// the one cost rule (Prices.Cost), against the costs they were stored
// with. Nothing is written (ApplyReprice writes).
func (l *Ledger) Reprice(ctx context.Context, f Filter, p *Prices) (Repricing, error) {
	out, _, err := reprice(ctx, l.pool, f, p, "")
	return out, err
}

// repriced is one record's cost under the new table (nil: unpriced).
type repriced struct {
	id   int64
	cost *int64
}

// reprice reads the filter's records with q (lock: "" or " FOR UPDATE")
// and prices each with p at its own day's prices: the figures by model,
// and each record's new cost.
func reprice(ctx context.Context, q rowQuerier, f Filter, p *Prices, lock string) (Repricing, []repriced, error) {
	where, args := f.where()
	rows, err := q.Query(ctx, `SELECT `+recordColumns+` FROM usage_records WHERE `+where+` ORDER BY id`+lock, args...)
	if err != nil {
		return Repricing{}, nil, database.Error("billing: reprice", err)
	}
	defer rows.Close()
	by := map[string]*RepriceRow{}
	var each []repriced
	cost := new(big.Int)
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return Repricing{}, nil, database.Error("billing: reprice", err)
		}
		row := by[r.Model]
		if row == nil {
			row = newRepriceRow(r.Model)
			by[r.Model] = row
		}
		row.Records++
		if r.CostMicros == nil {
			row.OldUnpriced++
		} else {
			row.OldCost.Add(row.OldCost, cost.SetInt64(*r.CostMicros))
		}
		c, err := p.At(r.CreatedAt).Cost(r.lines()...)
		var unpriced *Unpriced
		switch {
		case errors.As(err, &unpriced):
			row.NewUnpriced++
			each = append(each, repriced{id: r.ID})
		case err != nil:
			return Repricing{}, nil, apierr.Wrap(apierr.Internal, "", err)
		default:
			row.NewCost.Add(row.NewCost, cost.SetInt64(c))
			each = append(each, repriced{id: r.ID, cost: &c})
		}
	}
	if err := rows.Err(); err != nil {
		return Repricing{}, nil, database.Error("billing: reprice", err)
	}
	out := Repricing{From: f.From, To: f.To, TZ: f.zone().String(), NewVersion: p.Version, Models: []*RepriceRow{}, Total: newRepriceRow("total")}
	for _, row := range by {
		row.Difference.Sub(row.NewCost, row.OldCost)
		out.Models = append(out.Models, row)
		out.Total.add(row)
	}
	sort.Slice(out.Models, func(i, j int) bool { return out.Models[i].Model < out.Models[j].Model })
	return out, each, nil
}

// HandleReprice serves POST /v1/admin/costs/reprice: the body is a price
// table in prices.yaml's shape (YAML, or JSON, which YAML reads); the query
// is the finance filter. A table that does not load is 422, naming its
// line.
func (l *Ledger) HandleReprice(w http.ResponseWriter, r *http.Request) error {
	f, _, err := parseFilter(r, time.Now())
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r, maxPriceTable)
	if err != nil {
		return err
	}
	p, err := ParsePriceTable(body)
	if err != nil {
		return err
	}
	out, err := l.Reprice(r.Context(), f, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// maxReason bounds the loader's reason echoed back.
const maxReason = 300

// ParsePriceTable reads a price table from outside (a request body): what
// LoadPrices refuses is 422 VALIDATION_ERROR with its reason and line.
func ParsePriceTable(body []byte) (*Prices, error) {
	if len(body) == 0 {
		return nil, apierr.New(apierr.Validation, "The body must be a price table (the shape of prices.yaml).")
	}
	p, err := LoadPrices(body)
	if err != nil {
		msg := err.Error()
		if len(msg) > maxReason {
			msg = msg[:maxReason] + "…"
		}
		return nil, apierr.Wrap(apierr.Validation, "The price table does not load: "+strings.ToValidUTF8(msg, ""), err)
	}
	return p, nil
}
