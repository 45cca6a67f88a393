package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math/big"
	"net/http"
	"net/url"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Chart dimensions, in SVG user units.
const (
	chartW, chartH = 720, 220
	chartTop       = 20 // room for the largest bar's label
	chartBottom    = 30 // room for the day labels
	chartLeft      = 8
)

// Chart serves GET /v1/admin/costs/chart.svg: the cost per day of the
// summary's filters, drawn on the server as SVG (no chart library in the
// page). It asks the finance summary handler itself with group_by=day and
// the caller's other parameters untouched, so the chart parses filters,
// cuts days and sums exactly as the summary does: one implementation of
// each rule, and a filter the summary learns the chart takes too.
func Chart(summary httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return apierr.New(apierr.InvalidRequest, "The query string does not parse.")
		}
		if q.Has("group_by") {
			return apierr.New(apierr.InvalidRequest, "The chart is always by day; leave group_by out.")
		}
		r2 := r.Clone(r.Context())
		u := *r.URL
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += "group_by=day"
		r2.URL = &u
		rec := &recorder{header: http.Header{}}
		if err := summary(rec, r2); err != nil {
			return err
		}
		var s struct {
			Groups []struct {
				Key        string      `json:"key"`
				Records    int64       `json:"records"`
				Unpriced   int64       `json:"unpriced"`
				CostMicros json.Number `json:"cost_micros"`
			} `json:"groups"`
		}
		if err := json.Unmarshal(rec.body.Bytes(), &s); err != nil {
			return apierr.Wrap(apierr.Internal, "", err)
		}
		days := make([]Day, 0, len(s.Groups))
		for _, g := range s.Groups {
			c, ok := new(big.Int).SetString(string(g.CostMicros), 10)
			if !ok {
				return apierr.New(apierr.Internal, "")
			}
			days = append(days, Day{Key: g.Key, Records: g.Records, Unpriced: g.Unpriced, CostMicros: c})
		}
		var b bytes.Buffer
		if err := RenderChart(&b, days); err != nil {
			return apierr.Wrap(apierr.Internal, "", err)
		}
		secure(w, CSP)
		w.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, err = w.Write(b.Bytes())
		return err
	}
}

// recorder keeps the summary handler's answer in memory for Chart.
type recorder struct {
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(int)             {}

// Day is one bar of the chart.
type Day struct {
	Key        string
	Records    int64
	Unpriced   int64
	CostMicros *big.Int
}

type bar struct {
	X, Y, W, H, LabelX, LabelY int
	Key, Title                 string
	ShowLabel                  bool
}

var chartTpl = template.Must(template.New("chart").Parse(
	`<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="Cost per day">` +
		`{{if not .Bars}}<text class="chart-empty" x="{{.MidX}}" y="{{.MidY}}">No records in this range.</text>{{end}}` +
		`<line class="axis" x1="{{.Left}}" y1="{{.Base}}" x2="{{.Right}}" y2="{{.Base}}"/>` +
		`{{range .Bars}}<g class="day"><rect class="bar" data-day="{{.Key}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>` +
		`{{if .ShowLabel}}<text class="day-label" x="{{.LabelX}}" y="{{.LabelY}}">{{.Key}}</text>{{end}}</g>{{end}}` +
		`{{if .Bars}}<text class="chart-max" x="{{.Left}}" y="14">max {{.Max}} a day</text>{{end}}</svg>`))

// RenderChart writes the bars of days as SVG. Heights are integer shares
// of the largest day, computed in big integers like the sums themselves.
func RenderChart(w *bytes.Buffer, days []Day) error {
	max := new(big.Int)
	for _, d := range days {
		if d.CostMicros.Cmp(max) > 0 {
			max.Set(d.CostMicros)
		}
	}
	plot := chartH - chartTop - chartBottom
	base := chartH - chartBottom
	slot := 0
	if len(days) > 0 {
		slot = (chartW - 2*chartLeft) / len(days)
	}
	every := 1 + len(days)/8 // at most about eight day labels fit
	bars := make([]bar, 0, len(days))
	for i, d := range days {
		h := 0
		if max.Sign() > 0 {
			h = int(new(big.Int).Div(new(big.Int).Mul(d.CostMicros, big.NewInt(int64(plot))), max).Int64())
		}
		if h == 0 && d.CostMicros.Sign() > 0 {
			h = 1 // a day that cost something is never drawn as nothing
		}
		x := chartLeft + i*slot
		title := d.Key + ": " + Dollars(d.CostMicros)
		if d.Unpriced > 0 {
			title += fmt.Sprintf(", and %d unpriced", d.Unpriced)
		}
		bars = append(bars, bar{X: x + 1, Y: base - h, W: max1(slot - 2), H: h, Key: d.Key, Title: title,
			LabelX: x, LabelY: base + 18, ShowLabel: i%every == 0})
	}
	return chartTpl.Execute(w, map[string]any{
		"W": chartW, "H": chartH, "Left": chartLeft, "Right": chartW - chartLeft, "Base": base,
		"MidX": chartW / 3, "MidY": chartH / 2, "Bars": bars, "Max": Dollars(max),
	})
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// Dollars formats integer micro-USD as an exact dollar amount: "$1.234567".
func Dollars(micros *big.Int) string {
	neg := micros.Sign() < 0
	s := new(big.Int).Abs(micros).String()
	for len(s) < 7 {
		s = "0" + s
	}
	out := "$" + s[:len(s)-6] + "." + s[len(s)-6:]
	if neg {
		out = "-" + out
	}
	return out
}
