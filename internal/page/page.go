// Package page reads DESIGN §5's list parameters (?limit, default 20, at
// most 100, and an opaque &cursor) and makes keyset cursors for lists
// ordered newest first by (time, id).
package page

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Limits of DESIGN §5.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Request is a parsed list request. After is the zero Key on the first page.
type Request struct {
	Limit int
	After Key
}

// Key is a row's place in a newest-first list: the next page holds rows
// strictly before it.
type Key struct {
	At time.Time
	ID string
}

// IsZero reports the first page.
func (k Key) IsZero() bool { return k.At.IsZero() && k.ID == "" }

// Params are the query parameters a list reads; a route with filters of
// its own allows these beside them in httpx.Query.
var Params = []string{"limit", "cursor"}

// Parse reads a list route's query, which holds ?limit and &cursor only,
// through httpx.Query: a query that does not parse, or names anything
// else, is 400 INVALID_REQUEST.
func Parse(r *http.Request) (Request, error) {
	q, err := httpx.Query(r, Params...)
	if err != nil {
		return Request{}, err
	}
	return FromQuery(q)
}

// FromQuery reads limit and cursor from a query already parsed by
// httpx.Query. A limit that is not a whole number from 1 to 100, or a
// cursor this package did not make, is 400 INVALID_REQUEST; an empty
// cursor is the first page.
func FromQuery(q url.Values) (Request, error) {
	req := Request{Limit: DefaultLimit}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return req, apierr.Errorf(apierr.InvalidRequest, "limit must be a whole number from 1 to %d.", MaxLimit)
		}
		req.Limit = n
	}
	if s := q.Get("cursor"); s != "" {
		k, ok := decode(s)
		if !ok {
			return req, apierr.New(apierr.InvalidRequest, "The cursor is not valid; start again from the first page.")
		}
		req.After = k
	}
	return req, nil
}

// Cursor is the opaque cursor for the page after k.
func Cursor(k Key) string {
	raw := strconv.FormatInt(k.At.UnixMicro(), 10) + "." + k.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decode(s string) (Key, bool) {
	if len(s) > 512 {
		return Key{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Key{}, false
	}
	at, id, ok := strings.Cut(string(raw), ".")
	if !ok || id == "" {
		return Key{}, false
	}
	us, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return Key{}, false
	}
	return Key{At: time.UnixMicro(us).UTC(), ID: id}, true
}

// List is the §5 list body.
type List[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// Make builds a list from up to limit+1 rows read newest first: the extra
// row only says a next page exists, and the cursor points past the last
// row returned.
func Make[T any](rows []T, limit int, key func(T) Key) List[T] {
	out := List[T]{Items: rows}
	if out.Items == nil {
		out.Items = []T{}
	}
	if len(rows) > limit {
		out.Items = rows[:limit]
		c := Cursor(key(rows[limit-1]))
		out.NextCursor = &c
	}
	return out
}
