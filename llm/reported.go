package llm

// reporter is a stream that knows the usage its provider reported for the
// whole call (adapt.Core).
type reporter interface{ Reported() *Usage }

// WithReported is e carrying u, the usage the provider reported for the
// whole call before the call failed (the usage chunk came, then the
// connection was cut or stalled before the end marker), when e carries
// none of its own. The provider bills that call as it reported it, so it
// is recorded as reported, never estimated. e itself is left as it is: it
// may be a stream's sticky error.
func WithReported(e *Error, u *Usage) *Error {
	if e.Usage != nil || u == nil {
		return e
	}
	cp := *e
	cp.Usage = u
	return &cp
}
