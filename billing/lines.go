package billing

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// CostLine is one token class of one model on a record, at its price.
type CostLine struct {
	// Part is which of the record's models the line prices: "model" (the
	// record's own), "transcription" (a voice session's input
	// transcription) or "backend" (a live session's delegations).
	Part   string `json:"part"`
	Model  string `json:"model"`
	Class  string `json:"class"`
	Tokens int64  `json:"tokens"` // milliseconds for audio_per_minute
	Price  int64  `json:"price_micros_per_unit"`
	Unit   string `json:"unit"` // "1M tokens" or "minute"
	// Amount is tokens × price ÷ unit in micro-USD, as a decimal with six
	// places: exact for tokens; a duration's share is rounded half up at
	// the sixth place, and the record's Rounding takes up the rest.
	Amount string `json:"amount_micros"`
	// ServiceTier is the tier the line was served on when it is not the
	// standard one; Amount holds its multiple, Price does not.
	ServiceTier string `json:"service_tier,omitempty"`
}

// tierOf is a cost line's ServiceTier: empty for the standard tier.
func tierOf(tier string) string {
	if tier == "default" {
		return ""
	}
	return tier
}

// Detail is a record with its cost lines (GET /v1/admin/sessions/{id}).
// Σ lines' amounts + Rounding = LinesTotal exactly, and LinesTotal is the
// record's cost when it was priced with the current table.
type Detail struct {
	Record
	Lines          []CostLine `json:"lines"`
	Rounding       string     `json:"rounding_micros"`
	LinesTotal     *int64     `json:"lines_total_micros"` // nil: unpriced at the current table
	LinesVersion   string     `json:"lines_price_version"`
	UnpricedReason string     `json:"unpriced_reason,omitempty"`
	Freshness
}

// amountScale: line amounts are kept in millionths of a micro-USD.
const amountScale = 1_000_000

// lineParts name Record.lines, in order, for the cost lines.
var lineParts = [...]string{"model", "transcription", "backend"}

// costLines prices r's classes one by one with p: the lines, their exact
// total in millionths of a micro-USD, and why the record is unpriced, if
// it is (lines are still listed for what has a price).
func (p *Prices) costLines(r Record) ([]CostLine, *big.Int, *Unpriced) {
	lines := []CostLine{}
	sum := new(big.Int)
	why := p.walk(r.lines(), func(it priced) {
		var a *big.Int
		unit := "1M tokens"
		if it.perMinute {
			// ms × perMinute × halves ÷ 120,000 micro-USD, in
			// millionths, half up.
			num := new(big.Int).Mul(big.NewInt(it.n), big.NewInt(it.price*100*it.halves))
			num.Add(num, big.NewInt(6))
			a, unit = num.Quo(num, big.NewInt(12)), "minute"
		} else {
			// n × per1M ÷ 1e6 micro-USD is n × per1M millionths: exact
			// at the standard tier; a flex line's half of an odd product
			// rounds half up, and the record's Rounding takes the rest.
			a = new(big.Int).Mul(big.NewInt(it.n), big.NewInt(it.price*it.halves))
			a.Add(a, big.NewInt(1)).Quo(a, big.NewInt(2))
		}
		sum.Add(sum, a)
		lines = append(lines, CostLine{lineParts[it.line], it.model, it.class, it.n, it.price, unit, scaled(a), tierOf(it.tier)})
	})
	return lines, sum, why
}

// scaled writes millionths of a micro-USD as micro-USD with six places.
func scaled(n *big.Int) string {
	neg := n.Sign() < 0
	q, m := new(big.Int).QuoRem(new(big.Int).Abs(n), big.NewInt(amountScale), new(big.Int))
	s := q.String() + "." + leftPad(m.String(), 6)
	if neg {
		return "-" + s
	}
	return s
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// Detail is the record id with its cost lines at the current table.
func (fi *Finance) Detail(ctx context.Context, id int64) (Detail, error) {
	var r Record
	var fresh Freshness
	err := fi.read(ctx, func(c *pgxpool.Conn, fr Freshness) error {
		var err error
		fresh = fr
		r, err = scanRecord(c.QueryRow(ctx, `SELECT `+recordColumns+` FROM usage_records WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return apierr.New(apierr.NotFound, "There is no cost record with that id.")
		}
		return database.Error("billing: read record", err)
	})
	if err != nil {
		return Detail{}, err
	}
	prices := fi.prices.At(r.CreatedAt)
	lines, sum, why := prices.costLines(r)
	d := Detail{Record: r, Lines: lines, LinesVersion: fi.prices.Version, Rounding: "0.000000", Freshness: fresh}
	if why != nil {
		d.UnpricedReason = why.Error()
		return d, nil
	}
	total, err := prices.Cost(r.lines()...)
	if err != nil {
		return Detail{}, apierr.Wrap(apierr.Internal, "", err)
	}
	d.LinesTotal = &total
	d.Rounding = scaled(new(big.Int).Sub(new(big.Int).Mul(big.NewInt(total), big.NewInt(amountScale)), sum))
	return d, nil
}

// HandleDetail serves GET /v1/admin/sessions/{id}. An id that is not a
// record's is 404, as any unknown resource.
func (fi *Finance) HandleDetail(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpx.Query(r); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return apierr.New(apierr.NotFound, "There is no cost record with that id.")
	}
	d, err := fi.Detail(r.Context(), id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, d)
	return nil
}
