package billing

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Export formats.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// flushEvery bounds what the export holds before it writes: memory stays
// flat however many records the range covers.
const flushEvery = 256

// Manifest is what an export holds: its row count and total, read in the
// export's own snapshot, so they are the rows written. They equal the
// summary's total for the same filter.
type Manifest struct {
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	TZ         string    `json:"tz"`
	Rows       int64     `json:"rows"`
	Unpriced   int64     `json:"unpriced"`
	CostMicros Sum       `json:"cost_micros"` // priced records
	Freshness
}

func manifest(ctx context.Context, q rowQuerier, f Filter) (Manifest, error) {
	s, err := summarize(ctx, q, f, "")
	if err != nil {
		return Manifest{}, err
	}
	return Manifest{From: f.From, To: f.To, TZ: s.TZ, Rows: s.Total.Records, Unpriced: s.Total.Unpriced, CostMicros: s.Total.CostMicros}, nil
}

// Manifest is the manifest an export of f would carry now.
func (fi *Finance) Manifest(ctx context.Context, f Filter) (Manifest, error) {
	var m Manifest
	err := fi.read(ctx, func(c *pgxpool.Conn, fr Freshness) error {
		var err error
		m, err = manifest(ctx, c, f)
		m.Freshness = fr
		return err
	})
	return m, err
}

// Export writes the filter's records, oldest first, to w as RFC 4180 CSV
// (CRLF line ends) or JSON Lines (the listing's item shape, then a last
// line {"manifest": …}), streaming from the database. The manifest and
// the rows are read in one repeatable-read snapshot, so a record written
// meanwhile is in neither. started is called once with the manifest,
// before the first byte, so an HTTP handler can still answer a JSON error
// for a failure before it, and send the manifest as headers.
func (fi *Finance) Export(ctx context.Context, w io.Writer, f Filter, format string, started func(Manifest)) error {
	return fi.read(ctx, func(c *pgxpool.Conn, fr Freshness) error {
		return export(ctx, c, fr, w, f, format, started)
	})
}

// export is Export on c, whose position fr was read before the snapshot.
func export(ctx context.Context, c *pgxpool.Conn, fr Freshness, w io.Writer, f Filter, format string, started func(Manifest)) error {
	tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return database.Error("billing: export", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read only: nothing to keep
	m, err := manifest(ctx, tx, f)
	if err != nil {
		return err
	}
	m.Freshness = fr
	where, args := f.where()
	rows, err := tx.Query(ctx, `SELECT `+recordColumns+` FROM usage_records WHERE `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return database.Error("billing: export", err)
	}
	defer rows.Close()
	if started != nil {
		started(m)
	}
	var out exportWriter
	if format == FormatJSONL {
		out = newJSONLWriter(w)
	} else {
		out = newCSVWriter(w)
	}
	for n := int64(1); rows.Next(); n++ {
		r, err := scanRecord(rows)
		if err != nil {
			return database.Error("billing: export", err)
		}
		if err := out.write(r); err != nil {
			return err
		}
		if n%flushEvery == 0 {
			if err := out.flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return database.Error("billing: export", err)
	}
	return out.end(m)
}

type exportWriter interface {
	write(Record) error
	flush() error
	end(Manifest) error
}

type csvWriter struct {
	w     *csv.Writer
	cells []string
}

func newCSVWriter(w io.Writer) *csvWriter {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	c := &csvWriter{w: cw, cells: make([]string, len(csvHeader))}
	cw.Write(csvHeader) //nolint:errcheck // the writer keeps its first error for flush
	return c
}

func (c *csvWriter) write(r Record) error { return c.w.Write(r.csvCells(c.cells)) }
func (c *csvWriter) flush() error         { c.w.Flush(); return c.w.Error() }

// end: a CSV carries its manifest in headers and the manifest route, not
// in a trailer row a spreadsheet would read as a record.
func (c *csvWriter) end(Manifest) error { return c.flush() }

type jsonlWriter struct {
	b   *bufio.Writer
	enc *json.Encoder
}

func newJSONLWriter(w io.Writer) *jsonlWriter {
	b := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return &jsonlWriter{b, enc}
}

func (j *jsonlWriter) write(r Record) error { return j.enc.Encode(r) }
func (j *jsonlWriter) flush() error         { return j.b.Flush() }

// end writes the manifest as the last line: a reader that does not see it
// knows the file was cut short.
func (j *jsonlWriter) end(m Manifest) error {
	if err := j.enc.Encode(struct {
		Manifest Manifest `json:"manifest"`
	}{m}); err != nil {
		return err
	}
	return j.b.Flush()
}

// HandleCSV serves GET /v1/admin/costs.csv.
func (fi *Finance) HandleCSV(w http.ResponseWriter, r *http.Request) error {
	return fi.handleExport(w, r, FormatCSV)
}

// HandleJSONL serves GET /v1/admin/costs.jsonl.
func (fi *Finance) HandleJSONL(w http.ResponseWriter, r *http.Request) error {
	return fi.handleExport(w, r, FormatJSONL)
}

var exportTypes = map[string]string{FormatCSV: "text/csv; charset=utf-8", FormatJSONL: "application/jsonl; charset=utf-8"}

// handleExport streams an export with its manifest in headers. A failure
// before the first byte is the usual JSON error; one after it cuts the
// connection, so a truncated file can never pass for a whole one.
func (fi *Finance) handleExport(w http.ResponseWriter, r *http.Request, format string) error {
	f, _, err := parseFilter(r, time.Now())
	if err != nil {
		return err
	}
	started := false
	err = fi.Export(r.Context(), w, f, format, func(m Manifest) {
		started = true
		h := w.Header()
		h.Set("Content-Type", exportTypes[format])
		h.Set("Content-Disposition", `attachment; filename="voxgate-costs-`+
			f.From.Format("20060102")+"-"+f.To.Format("20060102")+`.`+format+`"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Voxgate-Rows", strconv.FormatInt(m.Rows, 10))
		h.Set("X-Voxgate-Unpriced", strconv.FormatInt(m.Unpriced, 10))
		h.Set("X-Voxgate-Cost-Micros", m.CostMicros.String())
		setFreshness(h, m.Freshness)
		w.WriteHeader(http.StatusOK)
	})
	if err != nil && started {
		if !httpx.ClientGone(r.Context()) && !errors.Is(err, context.Canceled) {
			httpx.Logger(r.Context()).ErrorContext(r.Context(), "cost export cut short", "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	return err
}

// HandleManifest serves GET /v1/admin/costs/manifest: what an export of
// the same filter holds.
func (fi *Finance) HandleManifest(w http.ResponseWriter, r *http.Request) error {
	f, _, err := parseFilter(r, time.Now())
	if err != nil {
		return err
	}
	m, err := fi.Manifest(r.Context(), f)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, m)
	return nil
}
