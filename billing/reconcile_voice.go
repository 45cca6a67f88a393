package billing

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/internal/database"
)

// voiceSQL: the ledger's voice records by UTC day, the models on them and
// whether they were priced, with each line's counts summed apart. A voice
// record holds up to three lines (Record.lines: its session model, its
// transcription model, a live session's backend model), and the provider
// reports each under its own model, so a day's figures are split by line,
// not by the record's model, and the backend's by the tier that served it
// (a line's cost is its usage at its tier). The rollups keep a record's
// figures under its model alone, so this reads the records.
const voiceSQL = `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), model, transcription_model, backend_model,
	backend_service_tier, cost_micros IS NOT NULL, coalesce(sum(cost_micros), 0)::bigint,
	sum(text_in)::bigint, sum(text_cached_in)::bigint, sum(text_cache_write_in)::bigint, sum(text_out)::bigint,
	sum(audio_in)::bigint, sum(audio_cached_in)::bigint, sum(audio_out)::bigint, sum(image_in)::bigint, sum(image_cached_in)::bigint,
	sum(audio_ms)::bigint,
	sum(transcription_text_in)::bigint, sum(transcription_audio_in)::bigint, sum(transcription_text_out)::bigint,
	sum(transcription_audio_ms)::bigint,
	sum(backend_text_in)::bigint, sum(backend_text_cached_in)::bigint, sum(backend_text_cache_write_in)::bigint, sum(backend_text_out)::bigint,
	sum(backend_text_cache_write_12h_in)::bigint
	FROM usage_records WHERE kind = 'voice' AND created_at >= $1 AND created_at < $2
	GROUP BY 1, 2, 3, 4, 5, 6`

// ledgerLine is one model's share of a day's voice records.
type ledgerLine struct {
	date, model        string
	tokens, costMicros int64
}

// voiceLines reads the voice records of [from, to) as per-model lines. A
// line's tokens are its input and output tokens, as the provider's
// completions usage counts them; a line billed by duration (GPT-Live's
// seconds, a transcription model's minutes) has none. The records' stored
// cost is shared out: each line after the first (transcription, backend)
// gets its usage priced at the table of its day (Prices.At), the session's
// model the rest, so the lines of a day add up to the records' cost
// exactly.
// Unpriced records count their tokens and no cost, as in a summary.
func voiceLines(ctx context.Context, q rowQuerier, prices *Prices, from, to time.Time) ([]ledgerLine, error) {
	rows, err := q.Query(ctx, voiceSQL, from, to)
	if err != nil {
		return nil, database.Error("billing: reconcile voice", err)
	}
	defer rows.Close()
	var out []ledgerLine
	for rows.Next() {
		var date string
		var priced bool
		var cost int64
		var r Record
		u, t, b := &r.Usage, &r.Transcription, &r.Backend
		if err := rows.Scan(&date, &r.Model, &r.TranscriptionModel, &r.BackendModel, &b.ServiceTier, &priced, &cost,
			&u.TextIn, &u.TextCachedIn, &u.TextCacheWriteIn, &u.TextOut, &u.AudioIn, &u.AudioCachedIn, &u.AudioOut,
			&u.ImageIn, &u.ImageCachedIn, &u.AudioMillis, &t.TextIn, &t.AudioIn, &t.TextOut, &t.AudioMillis,
			&b.TextIn, &b.TextCachedIn, &b.TextCacheWriteIn, &b.TextOut, &b.TextCacheWrite12hIn); err != nil {
			return nil, database.Error("billing: reconcile voice", err)
		}
		lines := r.lines()
		// The day's records were priced at the table valid on it (a dated
		// entry starts at a UTC day), so their lines are shared out at it.
		day, err := time.Parse("2006-01-02", date)
		if err != nil {
			return nil, err
		}
		at := prices.At(day)
		rest := cost
		for _, ln := range lines[1:] {
			if ln.Usage.IsZero() {
				continue
			}
			var share int64
			if priced {
				if c, err := at.Cost(ln); err == nil {
					share = min(c, rest)
				}
			}
			rest -= share
			out = append(out, ledgerLine{date, ln.Model, billedTokens(ln.Usage), share})
		}
		out = append(out, ledgerLine{date, r.Model, billedTokens(lines[0].Usage), rest})
	}
	if err := rows.Err(); err != nil {
		return nil, database.Error("billing: reconcile voice", err)
	}
	return out, nil
}

// billedTokens is u's input and output tokens together: what a provider's
// usage reports as input_tokens + output_tokens.
func billedTokens(u Usage) int64 {
	in, out := u.Tokens()
	return in + out
}
