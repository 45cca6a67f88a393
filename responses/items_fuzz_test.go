package responses

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
)

// FuzzInputItemsQuery: any query string is read or refused with a 400
// in the API's shape, never a panic; a page read lists at most limit
// items, in order, starting after the cursor, and says whether more
// follow.
func FuzzInputItemsQuery(f *testing.F) {
	for _, s := range []string{"", "limit=2", "order=asc&after=fc_1", "limit=100&order=desc", "include[]=a&include[]=b",
		"include=x", "limit=0", "after=%zz", "a;b", "after=msg_0&after=msg_1", "limit=-1&order=ASC"} {
		f.Add(s)
	}
	conv := withIDs([]Item{{ID: "msg_0", Type: "message", Role: "user", Text: "hi"},
		{ID: "fc_1", Type: "function_call", CallID: "c", Name: "f", Arguments: "{}"},
		{Type: "function_call_output", CallID: "c", Output: "ok"}, {ID: "msg_3", Type: "message", Role: "assistant", Text: "yo"}})
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest(http.MethodGet, "/v1/responses/resp_x/input_items", nil)
		r.URL.RawQuery = query
		pg, err := readPage(r)
		if err == nil {
			var list *ItemList
			if list, err = pg.list("resp_x", conv); err == nil {
				if len(list.Data) > pg.limit || list.HasMore != (len(list.Data) == pg.limit && list.LastID != lastID(conv, pg.asc)) {
					t.Fatalf("%q: %d items, has_more %v, last %q", query, len(list.Data), list.HasMore, list.LastID)
				}
				return
			}
		}
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status() != http.StatusBadRequest {
			t.Fatalf("%q: %v, want a 400", query, err)
		}
	})
}

// lastID is the id the last page of conv ends at, in that order.
func lastID(conv []Item, asc bool) string {
	if asc {
		return conv[len(conv)-1].ID
	}
	return conv[0].ID
}
