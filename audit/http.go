package audit

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
)

// defaultRange is the window a listing covers when from is not given.
const defaultRange = 7 * 24 * time.Hour

// HandleList serves GET /v1/admin/audit?from&to&user_id&status&kind
// (role admin): the rows created in [from, to), newest first, paged per
// DESIGN §5. to defaults to now and from to seven days before it.
func (l *Log) HandleList(w http.ResponseWriter, r *http.Request) error {
	q, err := httpx.Query(r, append([]string{"from", "to", "user_id", "status", "kind"}, page.Params...)...)
	if err != nil {
		return err
	}
	f, err := ParseFilter(q, time.Now())
	if err != nil {
		return err
	}
	p, err := page.FromQuery(q)
	if err != nil {
		return err
	}
	list, err := l.List(r.Context(), f, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// ParseFilter reads a listing's filter from its query. A filter given
// empty (status=) is refused: it would otherwise select everything.
func ParseFilter(q url.Values, now time.Time) (Filter, error) {
	for _, name := range []string{"user_id", "status", "kind"} {
		if q.Has(name) && q.Get(name) == "" {
			return Filter{}, apierr.Errorf(apierr.InvalidRequest, "%s is empty; leave it out to include every one.", name)
		}
	}
	f := Filter{UserID: q.Get("user_id"), Status: Status(q.Get("status")), Kind: Kind(q.Get("kind"))}
	var err error
	if f.From, f.To, err = httpx.TimeRange(q.Get("from"), q.Get("to"), now, defaultRange); err != nil {
		return f, err
	}
	if len(f.UserID) > 256 {
		return f, apierr.New(apierr.InvalidRequest, "user_id is too long.")
	}
	if f.Status != "" && f.Status != Pending && !slices.Contains(Finals, f.Status) {
		return f, apierr.Errorf(apierr.InvalidRequest, "status must be %s.", orList(append([]Status{Pending}, Finals...)))
	}
	if f.Kind != "" && !slices.Contains(Kinds, f.Kind) {
		return f, apierr.Errorf(apierr.InvalidRequest, "kind must be %s.", orList(Kinds))
	}
	return f, nil
}

// orList is "a, b or c": the refusal lists the values from the same
// slice the check reads, so a status or kind added later is never left
// out of it.
func orList[T ~string](vals []T) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// HandleGet serves one unit's row by its id (GET
// /v1/admin/chat/turns/{turn_id}, role admin): a turn's id is its usage
// record's turn_id.
func (l *Log) HandleGet(w http.ResponseWriter, r *http.Request) error {
	row, err := l.Get(r.Context(), r.PathValue("turn_id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, row)
	return nil
}
