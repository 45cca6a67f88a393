package billing

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
)

// defaultRange is the window a finance query covers when from is not given.
const defaultRange = 31 * 24 * time.Hour

// Filter selects records for finance: created in [From, To), optionally
// one user's or one kind's.
type Filter struct {
	From, To time.Time
	UserID   string
	Kind     string
}

// filterParams are the query parameters of a Filter.
var filterParams = []string{"from", "to", "user_id", "kind"}

// parseFilter reads a finance request's query through httpx.Query, which
// refuses what would widen the answer (a pair that does not parse, an
// unknown or repeated name), allowing the filter's parameters and extra.
// A narrowing filter given empty (user_id=) is refused too: it would
// otherwise select every user.
func parseFilter(r *http.Request, now time.Time, extra ...string) (Filter, url.Values, error) {
	q, err := httpx.Query(r, slices.Concat(extra, filterParams)...)
	if err != nil {
		return Filter{}, nil, err
	}
	for _, name := range []string{"user_id", "kind"} {
		if q.Has(name) && q.Get(name) == "" {
			return Filter{}, nil, apierr.Errorf(apierr.InvalidRequest, "%s is empty; leave it out to include every %s.", name, strings.TrimSuffix(name, "_id"))
		}
	}
	f, err := ParseFilter(q.Get("from"), q.Get("to"), q.Get("user_id"), q.Get("kind"), now)
	return f, q, err
}

// ParseFilter builds a filter from its text: from and to are RFC 3339
// times or UTC dates meaning their midnight; to defaults to now and from to
// 31 days before to. Bad values are 400 INVALID_REQUEST.
func ParseFilter(from, to, userID, kind string, now time.Time) (Filter, error) {
	f := Filter{UserID: userID, Kind: kind}
	var err error
	if f.From, f.To, err = httpx.TimeRange(from, to, now, defaultRange); err != nil {
		return f, err
	}
	if f.Kind != "" && !validKind(f.Kind) {
		return f, apierr.New(apierr.InvalidRequest, "kind must be voice, chat, completion or attempt.")
	}
	if len(f.UserID) > 256 {
		return f, apierr.New(apierr.InvalidRequest, "user_id is too long.")
	}
	return f, nil
}

// where is the filter as SQL conditions on usage_records, with its args
// starting at $1.
func (f Filter) where() (string, []any) {
	conds := []string{"created_at >= $1", "created_at < $2"}
	args := []any{f.From, f.To}
	if f.UserID != "" {
		args = append(args, f.UserID)
		conds = append(conds, fmt.Sprintf("user_id = $%d", len(args)))
	}
	if f.Kind != "" {
		args = append(args, f.Kind)
		conds = append(conds, fmt.Sprintf("kind = $%d", len(args)))
	}
	return strings.Join(conds, " AND "), args
}

// Records lists the filter's records newest first, a page at a time.
func (l *Ledger) Records(ctx context.Context, f Filter, p page.Request) (page.List[Record], error) {
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
	rows, err := l.pool.Query(ctx, `SELECT `+recordColumns+` FROM usage_records WHERE `+where+
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

// Summary is the body of GET /v1/admin/costs/summary.
type Summary struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	GroupBy string    `json:"group_by"`
	Groups  []Group   `json:"groups"`
	Total   Group     `json:"total"`
}

// groupKeys maps group_by to its SQL key, all in UTC.
var groupKeys = map[string]string{
	"day":   `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
	"user":  `user_id`,
	"model": `model`,
}

// summarySQL sums each group in numeric (sum over bigint is numeric, which
// cannot wrap) and hands the sums over as their exact decimal text. The
// token classes of a row are added as bigint before the sum: Write bounds
// each count by MaxCount, so a row's five stay far inside int64, and a row
// that broke the bound would fail the statement, never wrap. Every group
// has a row, so only cost_micros, NULL on unpriced records, can sum to
// NULL.
const summarySQL = `SELECT %s AS k, count(*),
	count(*) FILTER (WHERE cost_micros IS NULL),
	coalesce(sum(cost_micros), 0)::text,
	sum(duration_ms)::text,
	sum(text_in + audio_in + image_in + transcription_text_in + transcription_audio_in)::text,
	sum(text_out + audio_out + transcription_text_out)::text
	FROM usage_records WHERE %s GROUP BY k ORDER BY k`

// Summarize sums the filter's records by day, user or model. The total is
// the exact sum of the groups the same statement returned.
func (l *Ledger) Summarize(ctx context.Context, f Filter, groupBy string) (Summary, error) {
	key, ok := groupKeys[groupBy]
	if !ok {
		return Summary{}, apierr.New(apierr.InvalidRequest, "group_by must be day, user or model.")
	}
	where, args := f.where()
	rows, err := l.pool.Query(ctx, fmt.Sprintf(summarySQL, key, where), args...)
	if err != nil {
		return Summary{}, database.Error("billing: summarize", err)
	}
	defer rows.Close()
	s := Summary{From: f.From, To: f.To, GroupBy: groupBy, Groups: []Group{}, Total: Group{Key: "total"}}
	var sums [4]string
	for rows.Next() {
		var g Group
		if err := rows.Scan(&g.Key, &g.Records, &g.Unpriced, &sums[0], &sums[1], &sums[2], &sums[3]); err != nil {
			return Summary{}, database.Error("billing: summarize", err)
		}
		for i, dst := range []*Sum{&g.CostMicros, &g.DurationMS, &g.TokensIn, &g.TokensOut} {
			if *dst, err = parseSum(sums[i]); err != nil {
				return Summary{}, apierr.Wrap(apierr.Internal, "", err)
			}
		}
		s.Groups = append(s.Groups, g)
		s.Total.add(g)
	}
	if err := rows.Err(); err != nil {
		return Summary{}, database.Error("billing: summarize", err)
	}
	return s, nil
}

// HandleSessions serves GET /v1/admin/sessions.
func (l *Ledger) HandleSessions(w http.ResponseWriter, r *http.Request) error {
	f, q, err := parseFilter(r, time.Now(), page.Params...)
	if err != nil {
		return err
	}
	p, err := page.FromQuery(q)
	if err != nil {
		return err
	}
	list, err := l.Records(r.Context(), f, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// HandleSummary serves GET /v1/admin/costs/summary.
func (l *Ledger) HandleSummary(w http.ResponseWriter, r *http.Request) error {
	f, q, err := parseFilter(r, time.Now(), "group_by")
	if err != nil {
		return err
	}
	groupBy := q.Get("group_by")
	if groupBy == "" {
		groupBy = "day"
	}
	s, err := l.Summarize(r.Context(), f, groupBy)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, s)
	return nil
}
