// Package lifecycle follows the configured models to their providers'
// shutdown dates (DESIGN §10, model lifecycle): at startup and once a day it
// reads the provider's model list, warns about a configured model within
// WarnWithin of its date (naming the date and the replacement), shows the
// days left per configured model as a metric, and refuses to start on a
// model past its date. A provider that does not answer is not fatal.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

// Listed is one model of the provider's list.
type Listed struct {
	ID          string
	Shutdown    time.Time // the UTC day, when HasShutdown
	HasShutdown bool
}

// Lister reads the provider's model list.
type Lister interface {
	ListModels(ctx context.Context) ([]Listed, error)
}

// Configured is a model the configuration names, with the key naming it.
type Configured struct {
	Key   string // "chat.model", "voice.model", …
	Model string
	// Unlisted: the model's provider publishes no list the gateway reads
	// (Anthropic's and Gemini's targets), so the embedded table alone
	// speaks for it, whether or not the Lister answers.
	Unlisted bool
}

// NoList is the Lister of a gateway with no OpenAI key: it lists nothing,
// so only Unlisted models are checked (against the embedded table).
type NoList struct{}

// ListModels lists no models.
func (NoList) ListModels(context.Context) ([]Listed, error) { return nil, nil }

// Defaults of Params.
const (
	DefaultWarnWithin = 30 * 24 * time.Hour
	DefaultEvery      = 24 * time.Hour
	// DefaultListTimeout bounds one read of the list: a provider that
	// does not answer in time is logged and skipped.
	DefaultListTimeout = 10 * time.Second
)

// Params are what a Checker needs.
type Params struct {
	Models      []Configured
	Lister      Lister
	Retirements *Retirements // nil: DefaultRetirements
	// WarnWithin is how close to its date a model is warned about; zero
	// means DefaultWarnWithin.
	WarnWithin time.Duration
	// Every is the period of Run; zero means DefaultEvery.
	Every time.Duration
	// ListTimeout bounds one read of the list; zero means DefaultListTimeout.
	ListTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now        func() time.Time
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Checker checks the configured models' shutdown dates.
type Checker struct {
	p        Params
	daysLeft *prometheus.GaugeVec
}

// New checks p and registers the metric.
func New(p Params) (*Checker, error) {
	if p.Lister == nil {
		return nil, errors.New("lifecycle: a Lister is required")
	}
	if p.Retirements == nil {
		r, err := DefaultRetirements()
		if err != nil {
			return nil, err
		}
		p.Retirements = r
	}
	if p.WarnWithin == 0 {
		p.WarnWithin = DefaultWarnWithin
	}
	if p.Every == 0 {
		p.Every = DefaultEvery
	}
	if p.ListTimeout == 0 {
		p.ListTimeout = DefaultListTimeout
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	if p.WarnWithin < 0 || p.Every < 0 || p.ListTimeout < 0 {
		return nil, errors.New("lifecycle: WarnWithin, Every and ListTimeout must not be negative")
	}
	c := &Checker{p: p, daysLeft: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "voxgate", Subsystem: "model", Name: "shutdown_days_left",
		Help: "Days until a configured model's announced shutdown (0 on the day, negative past it); absent while none is announced.",
	}, []string{"key", "model"})}
	if err := p.Registerer.Register(c.daysLeft); err != nil {
		return nil, fmt.Errorf("lifecycle: metrics: %w", err)
	}
	return c, nil
}

// Status is what one check found for one configured model.
type Status struct {
	Configured
	Shutdown    time.Time // zero: none announced
	Replacement string
	DaysLeft    int
	Listed      bool // the provider's list names the model
}

// Retired reports a model on or past its shutdown day.
func (s Status) Retired() bool { return !s.Shutdown.IsZero() && s.DaysLeft <= 0 }

func (s Status) message() string {
	msg := fmt.Sprintf("%s %s shuts down on %s", s.Key, s.Model, s.Shutdown.Format(time.DateOnly))
	if s.Retired() {
		msg = fmt.Sprintf("%s %s was shut down on %s", s.Key, s.Model, s.Shutdown.Format(time.DateOnly))
	}
	if s.Replacement != "" {
		msg += "; replace it with " + s.Replacement
	}
	return msg
}

// ErrRetired is what Check returns (wrapped, with every retired model's
// message) when a configured model is past its shutdown date.
var ErrRetired = errors.New("lifecycle: a configured model is past its shutdown date")

// Check reads the provider's list once, logs what it finds, sets the
// metric, and returns an error wrapping ErrRetired when a configured model
// is past its date. A list that cannot be read is logged and nil is
// returned: the provider being down is no reason not to start.
func (c *Checker) Check(ctx context.Context) ([]Status, error) {
	ctx, cancel := context.WithTimeout(ctx, c.p.ListTimeout)
	defer cancel()
	listed, err := c.p.Lister.ListModels(ctx)
	if err != nil {
		c.p.Logger.WarnContext(ctx, "model lifecycle: the provider's model list could not be read; its models' shutdown dates not checked", "err", err)
	}
	byID := make(map[string]Listed, len(listed))
	for _, l := range listed {
		byID[l.ID] = l
	}
	today := day(c.p.Now())
	var out []Status
	var retired []string
	for _, m := range c.p.Models {
		if m.Model == "" || (err != nil && !m.Unlisted) {
			continue
		}
		s := c.status(m, byID, today)
		out = append(out, s)
		switch {
		case s.Shutdown.IsZero():
			c.daysLeft.DeleteLabelValues(m.Key, m.Model)
			if !s.Listed && !m.Unlisted {
				c.p.Logger.WarnContext(ctx, "model lifecycle: a configured model is not in the provider's list", "key", m.Key, "model", m.Model)
			}
			continue
		case s.Retired():
			retired = append(retired, s.message()) // the caller logs it, or stops on it
		case time.Duration(s.DaysLeft)*24*time.Hour <= c.p.WarnWithin:
			c.p.Logger.WarnContext(ctx, "model lifecycle: "+s.message(), c.attrs(s)...)
		}
		c.daysLeft.WithLabelValues(m.Key, m.Model).Set(float64(s.DaysLeft))
	}
	if len(retired) > 0 {
		return out, fmt.Errorf("%w: %s", ErrRetired, strings.Join(retired, "; "))
	}
	return out, nil
}

// status finds m's shutdown date: the provider's list speaks for a model it
// names (null there means none announced); the embedded table speaks for
// one it leaves out. The replacement always comes from the table.
func (c *Checker) status(m Configured, byID map[string]Listed, today time.Time) Status {
	s := Status{Configured: m}
	ret, known := c.p.Retirements.Lookup(m.Model)
	if known {
		s.Replacement = ret.Replacement
	}
	if l, ok := byID[m.Model]; ok && !m.Unlisted {
		s.Listed = true
		if l.HasShutdown {
			s.Shutdown = day(l.Shutdown)
		}
	} else if known {
		s.Shutdown = ret.Shutdown
	}
	if !s.Shutdown.IsZero() {
		s.DaysLeft = int(s.Shutdown.Sub(today).Hours() / 24)
	}
	return s
}

func (c *Checker) attrs(s Status) []any {
	return []any{"key", s.Key, "model", s.Model, "shutdown_date", s.Shutdown.Format(time.DateOnly),
		"days_left", s.DaysLeft, "replacement", s.Replacement}
}

// Run checks every Every until ctx ends. A model that passes its date while
// the gateway runs is logged as an error (its calls now fail) rather than
// stopping the gateway: the next start refuses it.
func (c *Checker) Run(ctx context.Context) {
	heartbeat.Every(ctx, c.p.Every, func(ctx context.Context) {
		if _, err := c.Check(ctx); err != nil {
			c.p.Logger.ErrorContext(ctx, err.Error())
		}
	})
}

// day is t's UTC calendar day at midnight.
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
