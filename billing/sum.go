package billing

import (
	"fmt"
	"math/big"
)

// Sum is an exact, non-negative integer total of a finance summary.
// PostgreSQL sums bigint columns as numeric, which has no int64 ceiling: a
// month of records near MaxCount at MaxPrice passes 2⁶³ micro-USD. Sum keeps
// every digit, so a total is exact or it is an error, never a wrapped
// number. The zero value is 0.
type Sum struct{ n *big.Int }

// parseSum reads a numeric's text, as the summary statement selects it.
// Anything but a plain non-negative integer (NaN, a fraction, a sign) is
// refused: it would mean the statement no longer sums what it should.
func parseSum(s string) (Sum, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 || s[0] == '+' {
		return Sum{}, fmt.Errorf("billing: %q is not a whole non-negative sum", s)
	}
	return Sum{n}, nil
}

// Add returns s + o, leaving both unchanged.
func (s Sum) Add(o Sum) Sum { return Sum{new(big.Int).Add(s.big(), o.big())} }

// Int64 is s as an int64, and whether it fits.
func (s Sum) Int64() (int64, bool) {
	b := s.big()
	return b.Int64(), b.IsInt64()
}

// String is s in decimal digits.
func (s Sum) String() string { return s.big().String() }

// MarshalJSON writes s as a JSON number with every digit: JSON numbers have
// no size limit, so a client that decodes numbers exactly reads the exact
// total (docs/billing.md says so, and which clients need care).
func (s Sum) MarshalJSON() ([]byte, error) { return s.big().Append(nil, 10), nil }

func (s Sum) big() *big.Int {
	if s.n == nil {
		return new(big.Int)
	}
	return s.n
}
