package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/voxgate/voxgate/internal/apierr"
)

// Leeway is the clock skew tolerated on exp, nbf and iat (DESIGN §4).
const Leeway = 30 * time.Second

// maxTokenBytes bounds what we hand to the JWT parser; real tokens are far
// smaller, and a huge header is an attack, not a credential.
const maxTokenBytes = 8 << 10

// MinSecretBytes is the shortest HS256 secret accepted: shorter secrets can
// be brute-forced offline from any token.
const MinSecretBytes = 32

// Params configures a Verifier. At least one of Secret and JWKSURL is needed.
type Params struct {
	Secret    []byte // HS256 shared secret
	JWKSURL   string // RS256/ES256 key set
	Issuer    string // checked when set
	Audience  string // checked when set
	CacheSize int    // verified-token cache entries; 0 disables it
	Now       func() time.Time
	Logger    *slog.Logger
	// RefreshUnknownKID limits JWKS refetches caused by unknown kids.
	// Default: one per 10 s, burst 2.
	RefreshUnknownKID *rate.Limiter
	// KeysCheckEvery is how often the key set is compared with the last one
	// seen, to drop cached verdicts after a rotation. Default 30 s.
	KeysCheckEvery time.Duration
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	p       Params
	jwks    keyfunc.Keyfunc
	parser  *jwt.Parser
	cache   *cache
	keyGen  atomic.Uint64 // bumped whenever the JWKS key set changes
	keysFP  atomic.Value  // string fingerprint of the last key set seen
	stopped chan struct{}
	cancel  context.CancelFunc
}

type claims struct {
	jwt.RegisteredClaims
	Role string `json:"role,omitempty"`
	Plan string `json:"plan,omitempty"`
}

// NewVerifier builds a Verifier. With a JWKS URL it starts a background
// refresh that stops with Close.
func NewVerifier(p Params) (*Verifier, error) {
	if len(p.Secret) == 0 && p.JWKSURL == "" {
		return nil, errors.New("auth: set VOXGATE_JWT_SECRET (HS256) or VOXGATE_JWKS_URL (RS256/ES256)")
	}
	if len(p.Secret) > 0 && len(p.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("auth: VOXGATE_JWT_SECRET must be at least %d bytes, got %d", MinSecretBytes, len(p.Secret))
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.RefreshUnknownKID == nil {
		p.RefreshUnknownKID = rate.NewLimiter(rate.Every(10*time.Second), 2)
	}
	if p.KeysCheckEvery <= 0 {
		p.KeysCheckEvery = 30 * time.Second
	}
	var methods []string
	if len(p.Secret) > 0 {
		methods = append(methods, jwt.SigningMethodHS256.Alg())
	}
	if p.JWKSURL != "" {
		methods = append(methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg())
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(methods),
		jwt.WithLeeway(Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(p.Now),
	}
	if p.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(p.Issuer))
	}
	if p.Audience != "" {
		opts = append(opts, jwt.WithAudience(p.Audience))
	}
	ctx, cancel := context.WithCancel(context.Background())
	v := &Verifier{p: p, parser: jwt.NewParser(opts...), cancel: cancel, stopped: make(chan struct{})}
	v.keysFP.Store("")
	if p.CacheSize > 0 {
		v.cache = newCache(p.CacheSize)
	}
	if p.JWKSURL == "" {
		close(v.stopped)
		return v, nil
	}
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{p.JWKSURL}, keyfunc.Override{
		HTTPTimeout:       5 * time.Second,
		RefreshInterval:   10 * time.Minute,
		RefreshUnknownKID: p.RefreshUnknownKID,
		// Never park a request waiting for the limiter: an unknown kid past
		// the limit is simply refused.
		RateLimitWaitMax: 50 * time.Millisecond,
		RefreshErrorHandlerFunc: func(string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				p.Logger.Warn("JWKS refresh failed", "err", err)
			}
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("auth: JWKS: %w", err)
	}
	v.jwks = kf
	v.checkKeys(ctx)
	go v.watchKeys(ctx)
	return v, nil
}

// Close stops the JWKS refresh.
func (v *Verifier) Close() {
	v.cancel()
	<-v.stopped
}

// VerifyHeader checks an Authorization header value.
func (v *Verifier) VerifyHeader(ctx context.Context, header string) (Principal, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, unauthorized("Send your token as: Authorization: Bearer <token>.", nil)
	}
	return v.Verify(ctx, strings.TrimSpace(token))
}

// Verify checks a raw token and returns its principal.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	if token == "" || len(token) > maxTokenBytes || strings.Count(token, ".") != 2 {
		return Principal{}, unauthorized("", nil)
	}
	now := v.p.Now()
	gen := v.keyGen.Load()
	if v.cache != nil {
		if p, ok := v.cache.get(token, now, gen); ok {
			return p, nil
		}
	}
	var c claims
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyFor(ctx)); err != nil {
		return Principal{}, unauthorized("", err)
	}
	if !v.claimsAreUTF8(token) {
		return Principal{}, unauthorized("", errors.New("token claims are not valid UTF-8"))
	}
	if !ValidSubject(c.Subject) {
		return Principal{}, unauthorized("", errors.New("token sub is empty, too long or not plain text"))
	}
	p := Principal{UserID: c.Subject, Plan: c.Plan}
	if c.Role == RoleAdmin || c.Role == RoleFinance {
		// Other role claims (e.g. Supabase's "authenticated") mean a plain user.
		p.Role = c.Role
	}
	if v.cache != nil && c.ExpiresAt != nil {
		if v.jwks != nil && v.checkKeys(ctx) {
			gen = v.keyGen.Load() // keys rotated during this parse: store under the new generation
		}
		v.cache.put(token, p, now, c.ExpiresAt.Add(Leeway), gen)
	}
	return p, nil
}

// keyFor returns the key for a token by its algorithm family, so an HS256
// token is only ever checked with the shared secret and never with a public
// key (algorithm confusion).
func (v *Verifier) keyFor(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		switch t.Method.(type) {
		case *jwt.SigningMethodHMAC:
			if len(v.p.Secret) == 0 {
				return nil, errors.New("HS256 tokens are not accepted")
			}
			return v.p.Secret, nil
		case *jwt.SigningMethodRSA, *jwt.SigningMethodECDSA:
			if v.jwks == nil {
				return nil, errors.New("asymmetric tokens are not accepted")
			}
			if _, ok := t.Header["kid"].(string); !ok {
				return nil, errors.New("token has no kid")
			}
			return v.jwks.KeyfuncCtx(ctx)(t)
		}
		return nil, fmt.Errorf("algorithm %v is not accepted", t.Header["alg"])
	}
}

// claimsAreUTF8 reports whether the claims segment of token is valid UTF-8,
// as RFC 7519 requires. The JSON decoder turns invalid bytes in a string
// into U+FFFD, so without this check two different raw subs could become
// one user id.
func (v *Verifier) claimsAreUTF8(token string) bool {
	_, rest, _ := strings.Cut(token, ".")
	seg, _, _ := strings.Cut(rest, ".")
	b, err := v.parser.DecodeSegment(seg)
	return err == nil && utf8.Valid(b)
}

// maxSubjectBytes bounds a user id: it keys rows and appears in URLs.
const maxSubjectBytes = 256

// ValidSubject is the one rule for a user id, wherever it arrives (a token's
// sub, a path): non-empty, at most 256 bytes, valid UTF-8 and free of control
// characters, since NUL and invalid UTF-8 fail every database write.
func ValidSubject(sub string) bool {
	if sub == "" || len(sub) > maxSubjectBytes || !utf8.ValidString(sub) {
		return false
	}
	for _, r := range sub {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func unauthorized(msg string, cause error) error {
	return apierr.Wrap(apierr.Unauthorized, msg, cause)
}
