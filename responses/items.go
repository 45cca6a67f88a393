package responses

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/unit"
)

// GET /v1/responses/{id}/input_items pages, as the spec has them.
const (
	defaultItemsLimit = 20
	maxItemsLimit     = 100
)

// itemIDRE is an item id a client may give and get back: a stored
// item's id is a cursor (after), so it stays plain.
var itemIDRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ItemList is the spec's ResponseItemList.
type ItemList struct {
	Object  string `json:"object"` // "list"
	Data    []any  `json:"data"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

// callOutputItem is the spec's FunctionToolCallOutputResource.
type callOutputItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"` // "function_call_output"
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// inputMessageItem is the spec's InputMessageResource with text content.
type inputMessageItem struct {
	ID      string      `json:"id"`
	Type    string      `json:"type"` // "message"
	Role    string      `json:"role"` // user, system, developer
	Status  string      `json:"status"`
	Content []inputText `json:"content"`
}

type inputText struct {
	Type string `json:"type"` // "input_text"
	Text string `json:"text"`
}

// withIDs gives each item of a conversation to be stored an id: its own
// (a client's, or the output item's it was) unless it is malformed or
// already used, else a new one. The ids are kept with the row, so an
// item carried into a continuation lists under the same id there.
func withIDs(conv []Item) []Item {
	out := make([]Item, len(conv))
	seen := make(map[string]bool, len(conv))
	for i, it := range conv {
		if !itemIDRE.MatchString(it.ID) || seen[it.ID] {
			it.ID = unit.NewID(itemPrefix(it.Type))
		}
		seen[it.ID] = true
		out[i] = it
	}
	return out
}

func itemPrefix(typ string) string {
	switch typ {
	case "function_call":
		return "fc_"
	case "function_call_output":
		return "fco_"
	}
	return "msg_"
}

// resource is it as the spec's ItemResource. An item stored without an
// id (a row older than ids) gets one derived from the response and its
// place, the same on every read.
func resource(respID string, i int, it Item) (id string, v any) {
	id = it.ID
	if id == "" {
		sum := sha256.Sum256([]byte(respID + "/" + strconv.Itoa(i)))
		id = itemPrefix(it.Type) + hex.EncodeToString(sum[:12])
	}
	switch {
	case it.Type == "function_call":
		return id, callItem(id, "completed", it.CallID, it.Name, it.Arguments)
	case it.Type == "function_call_output":
		return id, callOutputItem{ID: id, Type: it.Type, Status: "completed", CallID: it.CallID, Output: it.Output}
	case it.Role == "assistant":
		return id, messageItem(id, "completed", []OutputText{outputText(it.Text)})
	}
	return id, inputMessageItem{ID: id, Type: "message", Role: it.Role, Status: "completed",
		Content: []inputText{{Type: "input_text", Text: it.Text}}}
}

// HandleInputItems serves GET /v1/responses/{id}/input_items: the items
// the caller's stored response answered, which for a continuation are
// the whole conversation (the earlier responses' inputs and outputs,
// then its own input), as the spec's "items used to generate this
// response"; instructions are not items. Another user's id is 404.
func (s *Service) HandleInputItems(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	pg, err := readPage(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if !responseIDRE.MatchString(id) {
		return errNoSuchResponse("")
	}
	var in []byte
	err = s.env.Pool.QueryRow(r.Context(), `SELECT input FROM stored_responses WHERE id = $1 AND user_id = $2`, id, p.UserID).Scan(&in)
	if errors.Is(err, pgx.ErrNoRows) {
		return errNoSuchResponse("")
	}
	if err != nil {
		return database.Error("responses: read input items", err)
	}
	var conv []Item
	if err := json.Unmarshal(in, &conv); err != nil {
		return err
	}
	list, err := pg.list(id, conv)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// page is input_items' query: limit, order and after.
type page struct {
	limit int
	asc   bool
	after string
}

// readPage reads and checks the query. include is refused by name: an
// item here is text, so none of the spec's include values has anything
// to add.
func readPage(r *http.Request) (page, error) {
	// Before the query's own rules, which refuse a name given twice: the
	// official clients send include[]=a&include[]=b.
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
		for _, name := range []string{"include", "include[]"} {
			if v := q.Get(name); v != "" {
				return page{}, invalidField("include", "%q is not served by this gateway; leave it out", v[:min(len(v), 64)])
			}
		}
	}
	q, err := httpx.Query(r, "limit", "order", "after", "include", "include[]")
	if err != nil {
		return page{}, err
	}
	pg := page{limit: defaultItemsLimit, after: q.Get("after")}
	if pg.after != "" && !itemIDRE.MatchString(pg.after) {
		return page{}, invalidField("after", "not an item id")
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxItemsLimit {
			return page{}, invalidField("limit", "an integer from 1 to %d", maxItemsLimit)
		}
		pg.limit = n
	}
	switch v := q.Get("order"); v {
	case "", "desc":
	case "asc":
		pg.asc = true
	default:
		return page{}, invalidField("order", "asc or desc")
	}
	return pg, nil
}

// list is one page of conv, the response respID's input.
func (pg page) list(respID string, conv []Item) (*ItemList, error) {
	type entry struct {
		id string
		v  any
	}
	all := make([]entry, len(conv))
	for i, it := range conv {
		id, v := resource(respID, i, it)
		at := i
		if !pg.asc {
			at = len(conv) - 1 - i
		}
		all[at] = entry{id, v}
	}
	if pg.after != "" {
		found := false
		for i, e := range all {
			if e.id == pg.after {
				all, found = all[i+1:], true
				break
			}
		}
		if !found {
			return nil, invalidField("after", "no input item of this response has id %q", pg.after)
		}
	}
	out := &ItemList{Object: "list", Data: []any{}, HasMore: len(all) > pg.limit}
	for _, e := range all[:min(len(all), pg.limit)] {
		out.Data = append(out.Data, e.v)
	}
	if n := min(len(all), pg.limit); n > 0 {
		out.FirstID, out.LastID = all[0].id, all[n-1].id
	}
	return out, nil
}
