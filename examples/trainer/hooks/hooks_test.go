package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func day(n int, exercises int) Day {
	d := Day{DayNumber: n, Name: "Day", DayType: "training"}
	for range exercises {
		rest := 60.0
		d.Exercises = append(d.Exercises, Exercise{Name: "Squat", RestPeriod: &rest})
	}
	return d
}

// The seed's rule engine: refuse more days than the weeks hold and a day
// number twice; trim a day to 20 exercises and clamp rest, with warnings.
func TestCheck(t *testing.T) {
	cases := []struct {
		name    string
		plan    Plan
		wantErr string
		warns   int
	}{
		{"fits", Plan{DurationWeeks: 1, Days: []Day{day(1, 3), day(2, 0)}}, "", 0},
		{"too many days", Plan{DurationWeeks: 1, Days: []Day{day(1, 1), day(2, 1), day(3, 1), day(4, 1), day(5, 1), day(6, 1), day(7, 1), day(8, 1)}}, "more than", 0},
		{"day twice", Plan{DurationWeeks: 1, Days: []Day{day(1, 1), day(1, 1)}}, "twice", 0},
		{"trimmed", Plan{DurationWeeks: 1, Days: []Day{day(1, 25)}}, "", 1},
	}
	for _, c := range cases {
		warns, err := Check(&c.plan)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.wantErr)
		case c.wantErr == "" && (err != nil || len(warns) != c.warns):
			t.Errorf("%s: got %v, %v, want %d warnings", c.name, warns, err, c.warns)
		}
	}
	p := Plan{DurationWeeks: 1, Days: []Day{day(1, 25)}}
	over := 900.0
	p.Days[0].Exercises[0].RestPeriod = &over
	if warns, err := Check(&p); err != nil || len(p.Days[0].Exercises) != 20 || *p.Days[0].Exercises[0].RestPeriod != 600 || len(warns) != 2 {
		t.Errorf("got %d exercises, rest %v, warnings %v, %v", len(p.Days[0].Exercises), *p.Days[0].Exercises[0].RestPeriod, warns, err)
	}
}

// Any signed body gets an answer and never a panic: a refusal is a 4xx, a
// draft is JSON.
func FuzzHandler(f *testing.F) {
	secret := []byte("trainer-test-secret-0123456789")
	f.Add(`{"call_id":"c","user_id":"u","name":"draft_workout_plan","arguments":{"durationWeeks":1,"days":[{"dayNumber":1,"exercises":[{"restPeriod":-5}]}]}}`)
	f.Add(`{"name":"draft_workout_plan","arguments":{"durationWeeks":0,"days":[]}}`)
	h := Handler(secret)
	f.Fuzz(func(t *testing.T, body string) {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(ts + "." + body))
		r := httptest.NewRequest(http.MethodPost, "/hooks/draft_workout_plan", strings.NewReader(body))
		r.Header.Set("X-Voxgate-Signature", "t="+ts+",v1="+hex.EncodeToString(mac.Sum(nil)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == 200 && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("200 with a body that is not JSON: %q", w.Body.String())
		}
		if w.Code != 200 && (w.Code < 400 || w.Code > 499) {
			t.Fatalf("status %d", w.Code)
		}
	})
}
