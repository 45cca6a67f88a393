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

// HandleSessions is Finance.HandleSessions on the primary.
func (l *Ledger) HandleSessions(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleSessions(w, r)
}

// HandleDetail is Finance.HandleDetail on the primary.
func (l *Ledger) HandleDetail(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleDetail(w, r)
}

// HandleSummary is Finance.HandleSummary on the primary.
func (l *Ledger) HandleSummary(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleSummary(w, r)
}

// HandleCSV is Finance.HandleCSV on the primary.
func (l *Ledger) HandleCSV(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleCSV(w, r)
}

// HandleJSONL is Finance.HandleJSONL on the primary.
func (l *Ledger) HandleJSONL(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleJSONL(w, r)
}

// HandleManifest is Finance.HandleManifest on the primary.
func (l *Ledger) HandleManifest(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleManifest(w, r)
}

// HandleReconcile is Finance.HandleReconcile on the primary.
func (l *Ledger) HandleReconcile(p ProviderUsage) func(w http.ResponseWriter, r *http.Request) error {
	return l.primary().HandleReconcile(p)
}
