package billing

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
)

// RecordPage is the body of GET /v1/admin/sessions: a page of records and
// how current it is.
type RecordPage struct {
	page.List[Record]
	Freshness
}

// Records lists the filter's records newest first, a page at a time.
func (fi *Finance) Records(ctx context.Context, f Filter, p page.Request) (RecordPage, error) {
	var out RecordPage
	err := fi.read(ctx, func(c *pgxpool.Conn, fr Freshness) error {
		list, err := records(ctx, c, f, p)
		out = RecordPage{list, fr}
		return err
	})
	return out, err
}

func records(ctx context.Context, q rowQuerier, f Filter, p page.Request) (page.List[Record], error) {
	where, args := f.where()
	if !p.After.IsZero() {
		id, err := strconv.ParseInt(p.After.ID, 10, 64)
		if err != nil {
			return page.List[Record]{}, apierr.New(apierr.InvalidRequest, "The cursor is not valid; start again from the first page.")
		}
		args = append(args, p.After.At, id)
		where += fmt.Sprintf(" AND (created_at, id) < ($%d, $%d)", len(args)-1, len(args))
	}
	args = append(args, p.Limit+1)
	rows, err := q.Query(ctx, `SELECT `+recordColumns+` FROM usage_records WHERE `+where+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return page.List[Record]{}, database.Error("billing: list records", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return page.List[Record]{}, database.Error("billing: list records", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return page.List[Record]{}, database.Error("billing: list records", err)
	}
	return page.Make(out, p.Limit, func(r Record) page.Key {
		return page.Key{At: r.CreatedAt, ID: strconv.FormatInt(r.ID, 10)}
	}), nil
}

// Group is one row of a cost summary. Counts are int64 (there are never
// more rows than that); sums of counts and costs are exact Sums.
type Group struct {
	Key        string `json:"key"`
	Records    int64  `json:"records"`
	Unpriced   int64  `json:"unpriced"`
	CostMicros Sum    `json:"cost_micros"` // priced records only
	DurationMS Sum    `json:"duration_ms"`
	TokensIn   Sum    `json:"tokens_in"`
	TokensOut  Sum    `json:"tokens_out"`
}

func (g *Group) add(o Group) {
	g.Records += o.Records
	g.Unpriced += o.Unpriced
	g.CostMicros = g.CostMicros.Add(o.CostMicros)
	g.DurationMS = g.DurationMS.Add(o.DurationMS)
	g.TokensIn = g.TokensIn.Add(o.TokensIn)
	g.TokensOut = g.TokensOut.Add(o.TokensOut)
}

// HandleSessions serves GET /v1/admin/sessions.
func (fi *Finance) HandleSessions(w http.ResponseWriter, r *http.Request) error {
	f, q, err := parseFilter(r, time.Now(), page.Params...)
	if err != nil {
		return err
	}
	p, err := page.FromQuery(q)
	if err != nil {
		return err
	}
	list, err := fi.Records(r.Context(), f, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// HandleSummary serves GET /v1/admin/costs/summary.
func (fi *Finance) HandleSummary(w http.ResponseWriter, r *http.Request) error {
	f, q, err := parseFilter(r, time.Now(), "group_by")
	if err != nil {
		return err
	}
	groupBy := q.Get("group_by")
	if groupBy == "" {
		groupBy = "day"
	}
	s, err := fi.Summarize(r.Context(), f, groupBy)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s)
	return nil
}
