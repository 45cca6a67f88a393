package billing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// bucketWidth is the rollups' bucket (migration 0071): every offset IANA
// zones use today is a multiple of 15 minutes, so any zone's midnight is a
// bucket edge and a day is whole buckets.
const bucketWidth = 15 * time.Minute

// Summary is the body of GET /v1/admin/costs/summary.
type Summary struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	TZ      string    `json:"tz"`
	GroupBy string    `json:"group_by"`
	Groups  []Group   `json:"groups"`
	Total   Group     `json:"total"`
	Freshness
}

// groupKeys maps group_by to its SQL key over the summary's source rows;
// %s is the zone's parameter.
var groupKeys = map[string]string{
	"day":   `to_char(at AT TIME ZONE %s, 'YYYY-MM-DD')`,
	"user":  `user_id`,
	"model": `model`,
	"kind":  `kind`,
	"mode":  `mode`,
	"":      `'total'`, // one group: an export's manifest
}

// summarySQL sums the sources' rows (sourcesSQL) in numeric, which cannot
// wrap, and hands the sums over as exact decimal text.
const summarySQL = `WITH src AS (%[2]s)
SELECT %[1]s AS k, sum(records)::bigint, sum(unpriced)::bigint, sum(cost_micros)::text, sum(duration_ms)::text,
	sum(tokens_in)::text, sum(tokens_out)::text
FROM src GROUP BY k HAVING sum(records) <> 0 ORDER BY k`

// A tier is one source of a summary's rows: a rollup whose buckets are
// width wide, read for the whole buckets inside the range that no coarser
// tier answers. %[1]s is the tier's condition on its bucket, %[2]s the
// filter's (dims).
type tier struct {
	width time.Duration
	sql   string
}

// recordsTier reads the records themselves, for what no rollup answers: the
// partial buckets at a range's edges. A record's tokens in and out are
// migration 0079's functions, the rollups' own definition: they add the
// classes as bigint before the cast (Write bounds each count by MaxCount,
// so they stay far inside int64, and a row breaking the bound would fail
// the statement, never wrap). It comes first in every summary: its column
// names (at) are the union's.
var recordsTier = tier{0, `SELECT created_at AS at, user_id, kind, mode, model, 1 AS records, (cost_micros IS NULL)::int AS unpriced,
	coalesce(cost_micros, 0)::numeric AS cost_micros, duration_ms::numeric AS duration_ms,
	usage_record_tokens_in(usage_records) AS tokens_in, usage_record_tokens_out(usage_records) AS tokens_out
	FROM usage_records WHERE %[1]s AND %[2]s`}

// The rollups of migrations 0071 and 0080, finest first.
var (
	modelsTier = tier{bucketWidth, `SELECT bucket, '' AS user_id, kind, mode, model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out
	FROM usage_rollups WHERE %[1]s AND %[2]s`}
	usersTier = tier{bucketWidth, `SELECT bucket, user_id, kind, mode, model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out
	FROM usage_user_rollups WHERE %[1]s AND %[2]s`}
	userHoursTier = spansTier(time.Hour, "1 hour")
	userDaysTier  = spansTier(24*time.Hour, "1 day")
)

// deltasSQL reads the records' shares not yet folded into the rollups
// (migration 0081), for the whole of the rollups' part of the range:
// together with the rollups, in one statement's snapshot, they count
// every record once. %[1]s is the condition on the bucket, %[2]s the
// filter's.
const deltasSQL = `SELECT bucket, user_id, kind, mode, model, records, unpriced, cost_micros::numeric, duration_ms::numeric,
	tokens_in::numeric, tokens_out::numeric
	FROM usage_rollup_deltas WHERE %[1]s AND %[2]s`

func spansTier(width time.Duration, interval string) tier {
	return tier{width, `SELECT bucket, user_id, '' AS kind, '' AS mode, '' AS model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out
	FROM usage_user_spans WHERE width = interval '` + interval + `' AND %[1]s AND %[2]s`}
}

// tiersFor picks the sources of a summary, finest first after the records.
// Summaries that do not name users read usage_rollups, a few rows per
// bucket. Those that do read the per-user rollups, which with many users
// hold nearly a row per record; a summary by user that filters on nothing
// but the user cuts no days and may read the per-user hours and days of
// usage_user_spans, which keep the user alone.
func tiersFor(f Filter, groupBy string) []tier {
	switch {
	case groupBy != "user" && f.UserID == "":
		return []tier{recordsTier, modelsTier}
	case groupBy == "user" && f.Kind == "" && f.Mode == "" && f.Model == "":
		return []tier{recordsTier, usersTier, userHoursTier, userDaysTier}
	default:
		return []tier{recordsTier, usersTier}
	}
}

// sourcesSQL is the UNION ALL of the tiers' rows for [from, to). Each
// tier reads the ring its whole buckets cover inside the finer tier's
// range and outside the coarser one's: [lo, innerLo) ∪ [innerHi, hi),
// numbered parameters from $1; the filter's conditions follow. lo and hi
// are the rollups' part of the range (wholeBuckets); the tiers coarser
// than 15 minutes take whole buckets of their width inside it.
func sourcesSQL(tiers []tier, from, to, lo, hi time.Time, f Filter) (string, []any) {
	// spans[i] is the [lo, hi) tier i answers with everything inside it.
	spans := make([][2]time.Time, len(tiers)+1)
	spans[0] = [2]time.Time{from, to}
	for i := 1; i < len(tiers); i++ {
		a, b := lo, hi
		if i > 1 {
			a, b = ceilTo(spans[i-1][0], tiers[i].width), spans[i-1][1].Truncate(tiers[i].width)
		}
		if !a.Before(b) {
			a, b = spans[i-1][0], spans[i-1][0]
		}
		spans[i] = [2]time.Time{a, b}
	}
	// The coarsest tier's inner ring is empty.
	spans[len(tiers)] = [2]time.Time{spans[len(tiers)-1][0], spans[len(tiers)-1][0]}
	var args []any
	for _, s := range spans {
		args = append(args, s[0], s[1])
	}
	dims, dimArgs := f.dims(len(args) + 1)
	parts := make([]string, len(tiers))
	for i, t := range tiers {
		col := "bucket"
		if i == 0 {
			col = "created_at"
		}
		ring := fmt.Sprintf("((%[1]s >= $%[2]d AND %[1]s < $%[4]d) OR (%[1]s >= $%[5]d AND %[1]s < $%[3]d))",
			col, 2*i+1, 2*i+2, 2*i+3, 2*i+4)
		parts[i] = fmt.Sprintf(t.sql, ring, dims)
	}
	if len(tiers) > 1 { // the rollups answer [lo, hi): so do their pending deltas
		parts = append(parts, fmt.Sprintf(deltasSQL, "bucket >= $3 AND bucket < $4", dims))
	}
	return strings.Join(parts, "\n\tUNION ALL\n\t"), append(args, dimArgs...)
}

// ceilTo is t rounded up to a multiple of d.
func ceilTo(t time.Time, d time.Duration) time.Time {
	if c := t.Truncate(d); c.Before(t) {
		return c.Add(d)
	}
	return t
}

// wholeBuckets is the part of [from, to) the rollups answer: whole buckets
// inside it, and, when days are cut, only if every midnight of loc inside
// it is a bucket edge (a zone with a historical offset such as +00:44:30
// is answered from the records). ok false: the records answer it all.
func wholeBuckets(from, to time.Time, loc *time.Location, byDay bool) (time.Time, time.Time, bool) {
	lo, hi := ceilTo(from, bucketWidth), to.Truncate(bucketWidth)
	if !lo.Before(hi) {
		return from, from, false
	}
	if byDay {
		y, m, d := from.In(loc).Date()
		for day := time.Date(y, m, d, 0, 0, 0, 0, loc); day.Before(to); {
			if day.After(from) && !day.Truncate(bucketWidth).Equal(day) {
				return from, from, false
			}
			y, m, d = day.Date()
			day = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
		}
	}
	return lo, hi, true
}

// Summarize sums the filter's records by day (in the filter's zone), user,
// model, kind or mode, from the rollups where they answer and the records
// at the edges. The total is the exact sum of the groups the same
// statement returned.
func (fi *Finance) Summarize(ctx context.Context, f Filter, groupBy string) (Summary, error) {
	if _, ok := groupKeys[groupBy]; !ok || groupBy == "" {
		return Summary{}, apierr.New(apierr.InvalidRequest, "group_by must be day, user, model, kind or mode.")
	}
	var s Summary
	err := fi.read(ctx, func(c *pgxpool.Conn, fr Freshness) error {
		var err error
		s, err = summarize(ctx, c, f, groupBy)
		s.Freshness = fr
		return err
	})
	return s, err
}

// rowQuerier is a pool or a transaction (an export sums in its snapshot).
type rowQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func summarize(ctx context.Context, q rowQuerier, f Filter, groupBy string) (Summary, error) {
	key := groupKeys[groupBy]
	loc := f.zone()
	lo, hi, _ := wholeBuckets(f.From, f.To, loc, groupBy == "day")
	src, args := sourcesSQL(tiersFor(f, groupBy), f.From, f.To, lo, hi, f)
	if groupBy == "day" {
		args = append(args, loc.String())
		key = fmt.Sprintf(key, fmt.Sprintf("$%d::text", len(args)))
	}
	rows, err := q.Query(ctx, fmt.Sprintf(summarySQL, key, src), args...)
	if err != nil {
		return Summary{}, database.Error("billing: summarize", err)
	}
	defer rows.Close()
	s := Summary{From: f.From, To: f.To, TZ: loc.String(), GroupBy: groupBy, Groups: []Group{}, Total: Group{Key: "total"}}
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
