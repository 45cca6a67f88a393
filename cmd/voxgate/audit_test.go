package main

import (
	"encoding/json"
	"net/url"
	"testing"
)

// GET /v1/admin/audit lists a turn's row as an admin reads it, filtered
// by user, and refuses a bad filter with 400 and a message.
func TestAdminAudit(t *testing.T) {
	t.Parallel()
	g := startGateway(t, nil, nil)
	if r := g.chat(t, "u-audit", `{"message":"hello","stream":false}`); r.Status != 200 {
		t.Fatalf("chat: %d %s", r.Status, r.Raw)
	}
	admin := mint(t, "ops", "admin", "")
	code, _, body := call(t, "GET", g.m.URL()+"/v1/admin/audit?"+url.Values{"user_id": {"u-audit"}, "kind": {"chat"}}.Encode(), admin, nil)
	var list struct {
		Items []struct {
			TurnID     string   `json:"turn_id"`
			Status     string   `json:"status"`
			FiltersRan []string `json:"filters_ran"`
			InputHash  string   `json:"input_hash"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		t.Fatalf("GET /v1/admin/audit: %d %s", code, body)
	}
	if len(list.Items) != 1 || list.NextCursor != nil || list.Items[0].InputHash == "" || len(list.Items[0].FiltersRan) == 0 {
		t.Fatalf("items %+v, want the one turn with its hash and filters", list.Items)
	}
	// The one row, by its id, on the turn route.
	if code, _, body := call(t, "GET", g.m.URL()+"/v1/admin/chat/turns/"+list.Items[0].TurnID, admin, nil); code != 200 {
		t.Errorf("the turn's row: %d %s", code, body)
	}
	for _, q := range []string{"status=ok", "kind=voice", "from=soon", "limit=500", "user=u-audit"} {
		if code, _, body := call(t, "GET", g.m.URL()+"/v1/admin/audit?"+q, admin, nil); code != 400 || errorCode(body) != "INVALID_REQUEST" {
			t.Errorf("%s: %d %s, want 400 INVALID_REQUEST", q, code, body)
		}
	}
}
