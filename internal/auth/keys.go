package auth

import (
	"context"
	"sort"
	"strings"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

// watchKeys compares the JWKS key set with the last one seen, so verdicts
// cached under a rotated-out key stop being served.
func (v *Verifier) watchKeys(ctx context.Context) {
	defer close(v.stopped)
	heartbeat.Every(ctx, v.p.KeysCheckEvery, func(ctx context.Context) { v.checkKeys(ctx) })
}

// checkKeys reports whether the key set changed since the last check, and
// if so bumps the key generation and empties the cache.
func (v *Verifier) checkKeys(ctx context.Context) bool {
	jwks, err := v.jwks.Storage().KeyReadAll(ctx)
	if err != nil {
		return false
	}
	ids := make([]string, 0, len(jwks))
	for _, k := range jwks {
		m := k.Marshal()
		ids = append(ids, m.KID+"/"+string(m.ALG)+"/"+m.N+m.X+m.Y)
	}
	sort.Strings(ids)
	fp := strings.Join(ids, ",")
	if old := v.keysFP.Swap(fp); old == fp {
		return false
	}
	v.keyGen.Add(1)
	if v.cache != nil {
		v.cache.clear()
	}
	return true
}
