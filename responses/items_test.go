package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresp "github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/sim/simtest"
)

// get is a GET on the gateway as user: its status and body.
func (f *fixture) get(t *testing.T, user, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.gateway+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Test-User", user)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, body
}

// TestInputItems: a continuation's input items are the conversation it
// answered, the earlier response's input and output under their ids
// there, then its own input; newest first by default; paged with limit
// and after by openai-go's auto-pager in either order; each page the
// spec's ResponseItemList. Another user's id is 404 and the response
// stays; include, a bad limit, order or after are 400s naming them.
func TestInputItems(t *testing.T) {
	t.Parallel()
	a := newFixture(t, options{})
	b := newFixture(t, options{share: a})
	ctx := context.Background()
	first, err := a.client("u-items").Responses.New(ctx, oresp.ResponseNewParams{Model: "chat",
		Input: text("What's the weather in Paris?"), Tools: []oresp.ToolUnionParam{weatherTool}, Instructions: openai.String("Be brief.")})
	if err != nil {
		t.Fatal(err)
	}
	cs := calls(t, first)
	if len(cs) != 1 || len(first.Output) != 2 {
		t.Fatalf("first: %s", first.RawJSON())
	}
	out := oresp.ResponseInputItemParamOfFunctionCallOutput(`{"sky":"sunny"}`)
	out.OfFunctionCallOutput.CallID = openai.String(cs[0].CallID)
	second, err := b.client("u-items").Responses.New(ctx, oresp.ResponseNewParams{Model: "chat", PreviousResponseID: openai.String(first.ID),
		Tools: []oresp.ToolUnionParam{weatherTool}, Input: oresp.ResponseNewParamsInputUnion{OfInputItemList: oresp.ResponseInputParam{out}}})
	if err != nil {
		t.Fatal(err)
	}

	items := b.client("u-items").Responses.InputItems
	page, err := items.List(ctx, second.ID, oresp.InputItemListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var types, ids []string
	for _, it := range page.Data {
		types, ids = append(types, it.Type+"/"+it.Role), append(ids, it.ID)
	}
	want := []string{"function_call_output/", "function_call/", "message/assistant", "message/user"}
	if !slices.Equal(types, want) || page.HasMore {
		t.Fatalf("second's items, newest first: %v (has_more %v), want %v", types, page.HasMore, want)
	}
	if ids[1] != first.Output[1].ID || ids[2] != first.Output[0].ID {
		t.Errorf("the first response's output listed as %v, want its ids %s, %s", ids[1:3], first.Output[0].ID, first.Output[1].ID)
	}
	if !strings.Contains(page.Data[3].RawJSON(), `"text":"What's the weather in Paris?"`) || page.Data[0].CallID != cs[0].CallID ||
		page.Data[1].Arguments.OfString != `{"city":"Paris"}` {
		t.Errorf("items: %s", page.RawJSON())
	}

	for _, order := range []oresp.InputItemListParamsOrder{oresp.InputItemListParamsOrderAsc, oresp.InputItemListParamsOrderDesc} {
		pager := items.ListAutoPaging(ctx, second.ID, oresp.InputItemListParams{Limit: openai.Int(1), Order: order})
		var got []string
		for pager.Next() {
			got = append(got, pager.Current().ID)
		}
		if err := pager.Err(); err != nil {
			t.Fatal(err)
		}
		wantIDs := slices.Clone(ids)
		if order == oresp.InputItemListParamsOrderAsc {
			slices.Reverse(wantIDs)
		}
		if !slices.Equal(got, wantIDs) {
			t.Errorf("%s one at a time: %v, want %v", order, got, wantIDs)
		}
	}

	spec := simtest.Spec(t)
	for _, path := range []string{"/v1/responses/" + second.ID + "/input_items",
		"/v1/responses/" + second.ID + "/input_items?limit=2&order=asc&after=" + ids[3],
		"/v1/responses/" + first.ID + "/input_items?order=asc"} {
		status, body := a.get(t, "u-items", path)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		if err := spec.Validate("ResponseItemList", body); err != nil {
			t.Errorf("%s: %v\n%s", path, err, body)
		}
	}
	status, body := a.get(t, "u-items", "/v1/responses/"+first.ID+"/input_items")
	var one struct {
		Data    []json.RawMessage `json:"data"`
		FirstID string            `json:"first_id"`
		LastID  string            `json:"last_id"`
	}
	if err := json.Unmarshal(body, &one); status != http.StatusOK || err != nil || len(one.Data) != 1 || one.FirstID != ids[3] || one.LastID != ids[3] {
		t.Errorf("the first response's items (its user message alone, id %s): %d %s", ids[3], status, body)
	}

	var ae *openai.Error
	if _, err := a.client("u-thief").Responses.InputItems.List(ctx, second.ID, oresp.InputItemListParams{}); !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		t.Errorf("another user's input items: %v, want 404", err)
	}
	if n := a.count(t, `SELECT count(*) FROM stored_responses WHERE user_id = 'u-items'`); n != 2 {
		t.Errorf("stored responses after another user's read: %d", n)
	}

	_, err = items.List(ctx, second.ID, oresp.InputItemListParams{Include: []oresp.ResponseIncludable{"message.input_image.image_url",
		"message.output_text.logprobs"}})
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || ae.Param != "include" {
		t.Errorf("include: %v, want 400 naming include", err)
	}
	for query, param := range map[string]string{"limit=0": "limit", "limit=101": "limit", "limit=x": "limit",
		"order=sideways": "order", "after=msg_nope": "after", "after=a%20b": "after"} {
		status, body := a.get(t, "u-items", "/v1/responses/"+second.ID+"/input_items?"+query)
		var e struct {
			Error struct {
				Param string `json:"param"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &e); status != http.StatusBadRequest || err != nil || e.Error.Param != param {
			t.Errorf("?%s: %d %s, want 400 naming %s", query, status, body, param)
		}
	}
}
