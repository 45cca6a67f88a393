package billing

import (
	"strconv"
	"strings"
	"time"
)

// csvHeader names the export's columns, one per ledger field.
var csvHeader = []string{
	"id", "created_at", "user_id", "session_id", "turn_id", "kind", "provider", "model",
	"text_in", "text_cached_in", "text_out", "audio_in", "audio_cached_in", "audio_out", "image_in", "image_cached_in",
	"transcription_model", "transcription_text_in", "transcription_audio_in", "transcription_text_out", "transcription_audio_ms",
	"duration_ms", "overrun_s", "cost_micros", "unpriced", "price_version", "usage_source",
	"text_cache_write_in", // added after the export's first release, so last
	"mode",
	// A live session's voice milliseconds and its backend model and
	// tokens (migration 0079).
	"audio_ms", "backend_model", "backend_text_in", "backend_text_cached_in", "backend_text_cache_write_in", "backend_text_out",
	// The 12-hour part of the cache writes and the service tier
	// (migration 0088).
	"text_cache_write_12h_in", "service_tier",
	// The backend's 12-hour writes and tier (migration 0090).
	"backend_text_cache_write_12h_in", "backend_service_tier",
}

func (r Record) csvCells(c []string) []string {
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	u, t, b := r.Usage, r.Transcription, r.Backend
	cost, unpriced := UnpricedText, "true"
	if r.CostMicros != nil {
		cost, unpriced = i64(*r.CostMicros), "false"
	}
	vals := []string{
		i64(r.ID), r.CreatedAt.UTC().Format(time.RFC3339Nano), r.UserID, r.SessionID, r.TurnID, r.Kind, r.Provider, r.Model,
		i64(u.TextIn), i64(u.TextCachedIn), i64(u.TextOut), i64(u.AudioIn), i64(u.AudioCachedIn), i64(u.AudioOut), i64(u.ImageIn), i64(u.ImageCachedIn),
		r.TranscriptionModel, i64(t.TextIn), i64(t.AudioIn), i64(t.TextOut), i64(t.AudioMillis),
		i64(r.DurationMS), i64(r.OverrunS), cost, unpriced, r.PriceVersion, r.UsageSource,
		i64(u.TextCacheWriteIn), r.Mode,
		i64(u.AudioMillis), r.BackendModel, i64(b.TextIn), i64(b.TextCachedIn), i64(b.TextCacheWriteIn), i64(b.TextOut),
		i64(u.TextCacheWrite12hIn), u.ServiceTier,
		i64(b.TextCacheWrite12hIn), b.ServiceTier,
	}
	for i, v := range vals {
		c[i] = safeCell(v)
	}
	return c
}

// safeCell defuses a cell a spreadsheet would run as a formula (DESIGN
// §10). User ids and session ids come from outside, so any text cell may
// hold one. A formula can begin at the start of the cell or, in a
// spreadsheet that splits the cell on a separator of its locale (',' or
// ';', a tab or a line break), at the start of any piece; spaces before it
// are skipped, as some importers trim them. A cell with such a start gets a
// leading ' (the rule DESIGN states), and each later piece with one gets a
// ' just before it, since a quote at the cell's start does not reach a
// piece split off from it. Other cells are returned as they are.
func safeCell(s string) string {
	var at []int // where a piece after the first starts a formula
	risky, start := false, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if start && c != ' ' {
			start = false
			if formulaStart(c) {
				risky = true
				if i > 0 {
					at = append(at, i)
				}
			}
		}
		if cellSeparator(c) {
			start = true
		}
	}
	if !risky {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 1 + len(at))
	b.WriteByte('\'')
	last := 0
	for _, i := range at {
		b.WriteString(s[last:i])
		b.WriteByte('\'')
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// formulaStart: = + - @ begin a formula; a tab or carriage return is
// skipped by some spreadsheets before they look.
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// cellSeparator: what a spreadsheet in some locale splits a cell on when
// it reads the file: the list separators of comma and semicolon locales,
// and tab and line breaks.
func cellSeparator(c byte) bool {
	switch c {
	case ',', ';', '\t', '\n', '\r':
		return true
	}
	return false
}
