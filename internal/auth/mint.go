package auth

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/voxgate/voxgate/internal/randid"
)

// MintParams describes a token for `voxgate token` and tests.
type MintParams struct {
	Secret   []byte
	Subject  string
	Role     string
	Plan     string
	Issuer   string
	Audience string
	TTL      time.Duration
	Now      time.Time
}

// Mint signs an HS256 token.
func Mint(p MintParams) (string, error) {
	if len(p.Secret) < MinSecretBytes {
		return "", errors.New("auth: the signing secret must be at least 32 bytes")
	}
	if p.Subject == "" {
		return "", errors.New("auth: a token needs a subject (--sub)")
	}
	if p.TTL <= 0 {
		return "", errors.New("auth: the TTL must be positive")
	}
	if p.Role != "" && p.Role != RoleAdmin && p.Role != RoleFinance {
		return "", errors.New("auth: role must be admin or finance")
	}
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   p.Subject,
			Issuer:    p.Issuer,
			IssuedAt:  jwt.NewNumericDate(p.Now),
			ExpiresAt: jwt.NewNumericDate(p.Now.Add(p.TTL)),
		},
		Role: p.Role,
		Plan: p.Plan,
	}
	if p.Audience != "" {
		c.Audience = jwt.ClaimStrings{p.Audience}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(p.Secret)
}

// NewSecret returns a random 32-byte secret, hex encoded.
func NewSecret() (string, error) {
	return randid.New("", 32), nil
}
