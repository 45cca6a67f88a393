// Package logctx tags log lines with the request they were logged for:
// every line logged with a request's context carries its request_id, and
// its user_id once the caller is authenticated (DESIGN §13), whichever
// package logs it and without each call site repeating them.
package logctx

import (
	"context"
	"log/slog"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// The keys added; the access log and the error bodies use the same names.
const (
	KeyRequestID = "request_id"
	KeyUserID    = "user_id"
)

// Handler wraps another handler, adding KeyRequestID (from httpx) and
// KeyUserID (from the verified principal) read from the context a line is
// logged with. A key the line already carries, in its own attributes or
// bound with Logger.With, is not added again: a line that names another
// user keeps its own value, and no key appears twice.
type Handler struct {
	inner slog.Handler
	// bound marks the keys already bound at the top level by WithAttrs.
	boundID, boundUser bool
	// grouped is set once a group is open: attributes bound after it are
	// the group's, not the line's top level.
	grouped bool
}

// New returns h wrapped, or h itself when it already is a Handler, so
// wrapping twice never tags a line twice.
func New(h slog.Handler) slog.Handler {
	if lh, ok := h.(*Handler); ok {
		return lh
	}
	return &Handler{inner: h}
}

// Enabled reports whether the wrapped handler logs at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle adds the request's keys the line lacks, then passes it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if ctx == nil {
		return h.inner.Handle(ctx, r)
	}
	var id, user string
	if !h.boundID {
		id = httpx.RequestID(ctx)
	}
	if !h.boundUser {
		if p, ok := auth.FromContext(ctx); ok {
			user = p.UserID
		}
	}
	if id == "" && user == "" {
		return h.inner.Handle(ctx, r)
	}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case KeyRequestID:
			id = ""
		case KeyUserID:
			user = ""
		}
		return id != "" || user != ""
	})
	if id == "" && user == "" {
		return h.inner.Handle(ctx, r)
	}
	// A copy: the caller's record may share its attribute storage.
	r = r.Clone()
	if id != "" {
		r.AddAttrs(slog.String(KeyRequestID, id))
	}
	if user != "" {
		r.AddAttrs(slog.String(KeyUserID, user))
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs binds attrs, noting the request's keys among them.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(attrs)
	if !h.grouped {
		for _, a := range attrs {
			c.boundID = c.boundID || a.Key == KeyRequestID
			c.boundUser = c.boundUser || a.Key == KeyUserID
		}
	}
	return &c
}

// WithGroup opens a group. The request's keys then land inside it: the
// wrapped handler gives no way to add to the top level once it is open.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.grouped = true
	return &c
}
