package httpx

import (
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

// TimeRange reads a list's from and to parameters, one rule for every
// admin list: each is an RFC 3339 time or a UTC date meaning its
// midnight; to defaults to now and from to def before to; from must come
// before to. Bad values are 400 INVALID_REQUEST.
func TimeRange(from, to string, now time.Time, def time.Duration) (time.Time, time.Time, error) {
	end := now.UTC()
	var err error
	if to != "" {
		if end, err = parseTime(to); err != nil {
			return time.Time{}, time.Time{}, apierr.New(apierr.InvalidRequest, "to must be an RFC 3339 time or a date like 2026-11-01.")
		}
	}
	start := end.Add(-def)
	if from != "" {
		if start, err = parseTime(from); err != nil {
			return time.Time{}, time.Time{}, apierr.New(apierr.InvalidRequest, "from must be an RFC 3339 time or a date like 2026-11-01.")
		}
	}
	if !start.Before(end) {
		return time.Time{}, time.Time{}, apierr.New(apierr.InvalidRequest, "from must be before to.")
	}
	return start, end, nil
}

func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	return time.Parse(time.DateOnly, s)
}
