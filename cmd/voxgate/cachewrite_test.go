package main

import (
	"context"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A chat turn on the default model, whose long instructions the provider
// writes to its prompt cache, is recorded with those tokens in their own
// class and priced at their own rate; the next turn reads them as cached.
func TestChatTurnRecordsCacheWrites(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	dbURL := pgtest.URL(t)
	m, _ := startMain(t, dbURL, func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
		c.Chat.Instructions = strings.Repeat("Answer briefly and kindly. ", 200) // over 1,024 tokens
	})
	alice := mint(t, "alice", "", "pro")
	for _, msg := range []string{"hello there", "and again"} {
		if names := eventNames(t, postChat(t, context.Background(), m.URL(), alice, `{"message":"`+msg+`"}`)); len(names) == 0 || names[len(names)-1] != "done" {
			t.Fatalf("turn %q: events %v", msg, names)
		}
	}
	pool := pgtest.NewPool(t, dbURL, 1)
	rows, err := pool.Query(context.Background(), `SELECT model, text_in, text_cached_in, text_cache_write_in, cost_micros
		FROM usage_records WHERE kind = 'chat' AND user_id = 'alice' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][3]int64
	for rows.Next() {
		var model string
		var in, cached, written int64
		var cost *int64
		if err := rows.Scan(&model, &in, &cached, &written, &cost); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(model, "gpt-6-luna") || cost == nil || cached+written > in {
			t.Fatalf("record: model %s, in %d, cached %d, written %d, cost %v", model, in, cached, written, cost)
		}
		got = append(got, [3]int64{in, cached, written})
	}
	if len(got) != 2 || got[0][2] == 0 || got[0][1] != 0 || got[1][1] == 0 {
		t.Fatalf("records (in, cached, written) %v: want the first turn to write the cache and the second to read it", got)
	}
}
