package billing

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// defaultRange is the window a finance query covers when from is not given.
const defaultRange = 31 * 24 * time.Hour

// Filter selects records for finance: created in [From, To), optionally
// one user's, kind's, voice mode's or model's. TZ cuts days (nil is UTC).
type Filter struct {
	From, To time.Time
	TZ       *time.Location
	UserID   string
	Kind     string
	Mode     string
	Model    string
}

// FilterText is a filter as finance writes it, in a query string or on
// the command line.
type FilterText struct {
	From, To, TZ, UserID, Kind, Mode, Model string
}

// filterParams are the query parameters of a Filter.
var filterParams = []string{"from", "to", "tz", "user_id", "kind", "mode", "model"}

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
	for _, name := range []string{"user_id", "kind", "mode", "model"} {
		if q.Has(name) && q.Get(name) == "" {
			return Filter{}, nil, apierr.Errorf(apierr.InvalidRequest, "%s is empty; leave it out to include every %s.", name, strings.TrimSuffix(name, "_id"))
		}
	}
	// tz narrows nothing: left out, it is UTC.
	if q.Has("tz") && q.Get("tz") == "" {
		return Filter{}, nil, apierr.New(apierr.InvalidRequest, "tz is empty; leave it out for UTC, or name an IANA time zone such as Europe/Berlin.")
	}
	f, err := ParseFilter(FilterText{From: q.Get("from"), To: q.Get("to"), TZ: q.Get("tz"),
		UserID: q.Get("user_id"), Kind: q.Get("kind"), Mode: q.Get("mode"), Model: q.Get("model")}, now)
	return f, q, err
}

// ParseFilter builds a filter from its text: from and to are RFC 3339
// times or dates meaning their midnight in the zone tz (UTC when empty);
// to defaults to now and from to 31 days before to. Bad values are 400
// INVALID_REQUEST.
func ParseFilter(t FilterText, now time.Time) (Filter, error) {
	f := Filter{UserID: t.UserID, Kind: t.Kind, Mode: t.Mode, Model: t.Model}
	var err error
	if f.TZ, err = ParseZone(t.TZ); err != nil {
		return f, err
	}
	if f.From, f.To, err = httpx.TimeRange(inZone(t.From, f.TZ), inZone(t.To, f.TZ), now, defaultRange); err != nil {
		return f, err
	}
	switch {
	case f.Kind != "" && !validKind(f.Kind):
		return f, apierr.New(apierr.InvalidRequest, "kind must be voice, chat, completion, response, attempt or judge.")
	case f.Mode != "" && !validMode(f.Mode):
		return f, apierr.New(apierr.InvalidRequest, "mode must be direct, sideband or relay.")
	case len(f.UserID) > 256:
		return f, apierr.New(apierr.InvalidRequest, "user_id is too long.")
	case len(f.Model) > 256:
		return f, apierr.New(apierr.InvalidRequest, "model is too long.")
	}
	return f, nil
}

func validMode(m string) bool { return m == "direct" || m == "sideband" || m == "relay" }

// maxZoneName bounds a zone name: the longest IANA name is about 30 bytes.
const maxZoneName = 64

// ParseZone reads an IANA zone name; empty is UTC. "Local" (the server's
// own zone, meaningless to finance) and names that are not zones are 400.
func ParseZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	bad := apierr.New(apierr.InvalidRequest, "tz must be an IANA time zone such as UTC, Europe/Berlin or Asia/Kolkata.")
	if len(name) > maxZoneName || name == "Local" || strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") {
		return nil, bad
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, bad
	}
	return loc, nil
}

// inZone rewrites a bare date as its midnight in loc, in RFC 3339, so that
// httpx.TimeRange, which reads dates as UTC midnights, reads loc's. Other
// text passes through to be judged there.
func inZone(s string, loc *time.Location) string {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return s
	}
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).UTC().Format(time.RFC3339Nano)
}

func (f Filter) zone() *time.Location {
	if f.TZ == nil {
		return time.UTC
	}
	return f.TZ
}

// dims is the filter's conditions on the columns records and rollups
// share, numbered from $first.
func (f Filter) dims(first int) (string, []any) {
	var conds []string
	var args []any
	for _, d := range []struct{ col, val string }{{"user_id", f.UserID}, {"kind", f.Kind}, {"mode", f.Mode}, {"model", f.Model}} {
		if d.val != "" {
			args = append(args, d.val)
			conds = append(conds, fmt.Sprintf("%s = $%d", d.col, first+len(args)-1))
		}
	}
	if len(conds) == 0 {
		return "true", nil
	}
	return strings.Join(conds, " AND "), args
}

// where is the filter as SQL conditions on usage_records, with its args
// starting at $1.
func (f Filter) where() (string, []any) {
	dims, args := f.dims(3)
	return "created_at >= $1 AND created_at < $2 AND " + dims, append([]any{f.From, f.To}, args...)
}
