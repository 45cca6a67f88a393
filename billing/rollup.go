package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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

// summarySQL sums the rollups' whole buckets inside the range and the
// records of the partial buckets at its edges, in numeric (which cannot
// wrap), and hands the sums over as exact decimal text. $1, $2 are the
// rollup part [whole from, whole to); $3, $4 the range. A record's tokens
// in and out are migration 0079's functions, the rollups' own definition:
// they add the classes as bigint before the cast (Write bounds each count
// by MaxCount, so they stay far inside int64, and a row breaking the bound
// would fail the statement, never wrap).
const summarySQL = `WITH src AS (
	SELECT bucket AS at, %[3]s AS user_id, kind, mode, model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out
	FROM %[4]s WHERE bucket >= $1 AND bucket < $2 AND %[2]s
	UNION ALL
	SELECT created_at, user_id, kind, mode, model, 1, (cost_micros IS NULL)::int, coalesce(cost_micros, 0)::numeric,
		duration_ms::numeric, usage_record_tokens_in(usage_records), usage_record_tokens_out(usage_records)
	FROM usage_records WHERE ((created_at >= $3 AND created_at < $1) OR (created_at >= $2 AND created_at < $4)) AND %[2]s
)
SELECT %[1]s AS k, sum(records)::bigint, sum(unpriced)::bigint, sum(cost_micros)::text, sum(duration_ms)::text,
	sum(tokens_in)::text, sum(tokens_out)::text
FROM src GROUP BY k HAVING sum(records) <> 0 ORDER BY k`

// wholeBuckets is the part of [from, to) the rollups answer: whole buckets
// inside it, and, when days are cut, only if every midnight of loc inside
// it is a bucket edge (a zone with a historical offset such as +00:44:30
// is answered from the records). ok false: the records answer it all.
func wholeBuckets(from, to time.Time, loc *time.Location, byDay bool) (time.Time, time.Time, bool) {
	lo, hi := from.Truncate(bucketWidth), to.Truncate(bucketWidth)
	if lo.Before(from) {
		lo = lo.Add(bucketWidth)
	}
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
func (l *Ledger) Summarize(ctx context.Context, f Filter, groupBy string) (Summary, error) {
	if _, ok := groupKeys[groupBy]; !ok || groupBy == "" {
		return Summary{}, apierr.New(apierr.InvalidRequest, "group_by must be day, user, model, kind or mode.")
	}
	return summarize(ctx, l.pool, f, groupBy)
}

// rowQuerier is a pool or a transaction (an export sums in its snapshot).
type rowQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func summarize(ctx context.Context, q rowQuerier, f Filter, groupBy string) (Summary, error) {
	key := groupKeys[groupBy]
	loc := f.zone()
	lo, hi, _ := wholeBuckets(f.From, f.To, loc, groupBy == "day")
	dims, dimArgs := f.dims(5)
	args := append([]any{lo, hi, f.From, f.To}, dimArgs...)
	if groupBy == "day" {
		args = append(args, loc.String())
		key = fmt.Sprintf(key, fmt.Sprintf("$%d::text", len(args)))
	}
	// Only a summary that names users reads the per-user rollups, which
	// hold nearly a row per record when users are many.
	userCol, table := "''", "usage_rollups"
	if groupBy == "user" || f.UserID != "" {
		userCol, table = "user_id", "usage_user_rollups"
	}
	rows, err := q.Query(ctx, fmt.Sprintf(summarySQL, key, dims, userCol, table), args...)
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
