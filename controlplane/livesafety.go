package controlplane

import (
	"context"
	"fmt"
	"strings"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/safety"
)

// The safety filters of a live session (DESIGN §12, docs/voice.md). A
// delegation's task is the transcript with every line sanitized (taskText:
// the input filter; the transcript's bounds are its length check). Its
// answer passes the output filters before it is sent as commentary, the
// one point where it can still be stopped. What the voice says is screened
// after the fact, as a sideband call's output transcripts are.

// screenComment judges a delegation's answer before the voice gets it: the
// commentary to send ("" when nothing of it may be said), the status its
// audit row would settle with, and the verdict. A medical claim is cut
// before the sentence that made it and the fallback said after what came
// before, as on a chat turn; personal data sends nothing. The filters that
// ran and the rules that matched go on d's audit row, and a blocked
// answer flags the session.
func (c *liveCall) screenComment(ctx context.Context, d *delegation, answer string) (string, audit.Status) {
	v := safety.CheckText(answer, safety.Options{Language: c.language})
	d.row.FiltersRan = append(d.row.FiltersRan, v.Ran...)
	d.row.RuleIDs = v.Rules
	switch v.Outcome {
	case safety.Blocked:
		c.s.log.WarnContext(ctx, "live: a delegation's answer held a medical claim; the fallback was said",
			"session_id", c.id, "delegation_id", d.id, "rules", v.Rules)
		c.s.flagSession(ctx, c.id, safety.Flag{Type: safety.MedicalClaim, Blocked: true,
			Message: "Part of an answer read as medical advice and was replaced."})
		return strings.TrimSpace(strings.TrimSpace(v.Kept) + " " + v.Fallback), audit.MedicalClaimBlocked
	case safety.Leak:
		c.s.log.WarnContext(ctx, "live: a delegation's answer held personal data; nothing of it was said",
			"session_id", c.id, "delegation_id", d.id, "rules", v.Rules)
		c.s.flagSession(ctx, c.id, safety.Flag{Type: PIILeak, Blocked: true,
			Message: "An answer held personal data and was not said."})
		return "", audit.PIILeak
	}
	return answer, audit.Success
}

// screenSpoken screens what the voice has finished saying: every
// assistant line of the transcript but one still being spoken (the last,
// unless the session is over), once each. screenedMS, kept with the usage,
// is where the screened lines end, so an adopter does not screen them
// again.
func (c *liveCall) screenSpoken(ctx context.Context, over bool) {
	end := len(c.transcript)
	if !over {
		end-- // the last line may still grow
	}
	for _, l := range c.transcript[:max(end, 0)] {
		if l.Speaker != "assistant" || l.StartMS < c.screenedMS {
			continue
		}
		c.s.screenSpoken(ctx, c.id, c.userID, c.language, fmt.Sprintf("live/%d", l.StartMS), l.Text)
		c.screenedMS = l.StartMS + 1
	}
}
