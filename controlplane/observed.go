package controlplane

import (
	"context"
	"encoding/json"
	"time"
)

// saveUsageSQL writes the usage observed on many calls in one statement.
// A holder that lost its call to another replica writes nothing: the
// usage is the new holder's to keep. One handing over writes until the
// call is adopted.
const saveUsageSQL = `UPDATE voice_sessions v SET observed = u.observed::jsonb
FROM unnest($1::text[], $2::text[]) AS u(id, observed)
WHERE v.id = u.id AND v.ended_at IS NULL AND (v.holder = $3 OR v.holder IS NULL)`

// noteUsage keeps a call's usage sum (a ReportedUsage, or a live
// session's liveObserved) for the next save: the lease loop
// saves every held call's in one statement each renewal, so usage costs
// the database a write per replica per second, not one per response.
func (s *Service) noteUsage(id string, u any) {
	raw, _ := json.Marshal(u)
	s.umu.Lock()
	s.unsaved[id] = string(raw)
	s.umu.Unlock()
}

// saveUsage writes the usage noted for ids, or for every call when ids is
// empty. What fails to save is kept for the next try.
func (s *Service) saveUsage(ctx context.Context, ids ...string) {
	s.umu.Lock()
	var keys, vals []string
	take := func(id string) {
		if v, ok := s.unsaved[id]; ok {
			keys, vals = append(keys, id), append(vals, v)
			delete(s.unsaved, id)
		}
	}
	if len(ids) == 0 {
		for id := range s.unsaved {
			take(id)
		}
	}
	for _, id := range ids {
		take(id)
	}
	s.umu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, saveUsageSQL, keys, vals, s.replica); err != nil {
		s.log.Warn("voice sideband: usage not saved; trying again", "sessions", len(keys), "err", err)
		s.umu.Lock()
		for i, id := range keys {
			if _, newer := s.unsaved[id]; !newer {
				s.unsaved[id] = vals[i]
			}
		}
		s.umu.Unlock()
	}
}
