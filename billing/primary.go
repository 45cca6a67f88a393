package billing

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/page"
)

// The Ledger's own finance reads go to the primary, through the same code
// as Finance's: for the CLI without read_url and for callers that must see
// a write they have just made (a reprice's totals, tests). The gateway's
// finance routes are served by a Finance on the read pool (NewFinance).

func (l *Ledger) primary() *Finance { return NewFinance(l, nil) }

// Records is Finance.Records on the primary.
func (l *Ledger) Records(ctx context.Context, f Filter, p page.Request) (page.List[Record], error) {
	out, err := l.primary().Records(ctx, f, p)
	return out.List, err
}

// Summarize is Finance.Summarize on the primary.
func (l *Ledger) Summarize(ctx context.Context, f Filter, groupBy string) (Summary, error) {
	return l.primary().Summarize(ctx, f, groupBy)
}

// Manifest is Finance.Manifest on the primary.
func (l *Ledger) Manifest(ctx context.Context, f Filter) (Manifest, error) {
	return l.primary().Manifest(ctx, f)
}

// Export is Finance.Export on the primary.
func (l *Ledger) Export(ctx context.Context, w io.Writer, f Filter, format string, started func(Manifest)) error {
	return l.primary().Export(ctx, w, f, format, started)
}

// Reconcile is Finance.Reconcile on the primary.
func (l *Ledger) Reconcile(ctx context.Context, from, to time.Time, p ProviderUsage, threshold int64) (Reconciliation, error) {
	return l.primary().Reconcile(ctx, from, to, p, threshold)
}

// Detail is Finance.Detail on the primary.
func (l *Ledger) Detail(ctx context.Context, id int64) (Detail, error) {
	return l.primary().Detail(ctx, id)
}

// The finance routes' handlers on the primary, as the Finance of a gateway
// without read_url serves them.

func (l *Ledger) HandleSessions(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleSessions(w, r)
}

func (l *Ledger) HandleDetail(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleDetail(w, r)
}

func (l *Ledger) HandleSummary(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleSummary(w, r)
}

func (l *Ledger) HandleCSV(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleCSV(w, r)
}

func (l *Ledger) HandleJSONL(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleJSONL(w, r)
}

func (l *Ledger) HandleManifest(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleManifest(w, r)
}

func (l *Ledger) HandleReconcile(p ProviderUsage) func(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleReconcile(p)
}
