package tools

import (
	"slices"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/safety"
)

// The output filters of DESIGN §12 on tool calls (docs/safety.md). Every
// call passes the executor, whichever path brought it (a chat turn, a
// voice call in any mode, a GPT-Live delegation), so the screen lives
// here: a call's arguments are checked before it runs or is stored for
// confirmation, and its cards and partials before anyone sees them. The
// screen itself is a hook (ExecutorParams.Screen) the composition root
// sets, so this package knows the filter's entry point, not its model.

// ScreenFunc checks text with the output filters; safety.CheckText is the
// one the gateway runs.
type ScreenFunc func(text string, o safety.Options) safety.Verdict

// UnsafeArguments is the code of a call the screen refused.
const UnsafeArguments = "unsafe_arguments"

// Unsafe is the refusal of a call whose arguments hold a medical claim or
// personal data. Execute answers it as a Result the model reads (it may
// try again); Check returns it as its error, so a call that could never
// run is never offered for confirmation. As a DESIGN §5 error it is
// TOOL_NOT_ALLOWED.
type Unsafe struct {
	Result Result
}

func (u *Unsafe) Error() string { return u.Result.Error.Error() }

// Unwrap is the client-safe error of the refusal.
func (u *Unsafe) Unwrap() error {
	return apierr.New(apierr.ToolNotAllowed, u.Result.Error.Message)
}

// screenOptions are the filter's options for c's user: the profile's
// language and name when the caller knows them ("" has each piece's
// language detected), and the caller's judge if it has one.
func screenOptions(c *Call) safety.Options {
	return safety.Options{Language: c.Language, DisplayName: c.DisplayName, Judge: c.Judge, JudgeBand: c.JudgeBand}
}

// screenArguments checks a call's canonical arguments; nil means they may
// go on.
func (e *Executor) screenArguments(t *Tool, c *Call, args []byte) *Unsafe {
	if e.screen == nil {
		return nil
	}
	v := e.screen(safety.JSONText(args), screenOptions(c))
	if v.Outcome == safety.Pass {
		return nil
	}
	res := Result{CallID: c.CallID, Name: t.Name, SafetyFlags: []safety.Flag{}, Screened: v.Rules}
	res.Error = Failf(UnsafeArguments, "These arguments hold personal data; the call was not made.")
	if v.Outcome == safety.Blocked {
		res.Error = Failf(UnsafeArguments, "These arguments read as medical advice; the call was not made.")
		res.SafetyFlags = append(res.SafetyFlags, safety.Flag{Type: safety.MedicalClaim, Blocked: true,
			Message: "A tool call with medical advice in it was not made.", Field: t.Name})
	}
	res.Output = res.Error.Output()
	return &Unsafe{Result: res}
}

// screenCards keeps the cards and partials of res whose text passes the
// filter: one with a claim or personal data in it is dropped before it is
// shown, and a claim is flagged. A replayed result is screened again, as
// the stored one holds what the tool returned.
func (e *Executor) screenCards(c *Call, res *Result) {
	if e.screen == nil {
		return
	}
	keep := func(cards []Card) []Card {
		kept := cards[:0:0]
		for _, card := range cards {
			v := e.screen(safety.JSONText(card.Data), screenOptions(c))
			res.Screened = append(res.Screened, v.Rules...)
			switch v.Outcome {
			case safety.Pass:
				kept = append(kept, card)
			case safety.Blocked:
				f := safety.Flag{Type: safety.MedicalClaim, Blocked: true,
					Message: "A card with medical advice in it was not shown.", Field: card.Kind}
				if !slices.Contains(res.SafetyFlags, f) {
					res.SafetyFlags = append(res.SafetyFlags, f)
				}
			}
		}
		if len(kept) == 0 {
			return nil
		}
		return kept
	}
	res.Cards, res.Partials = keep(res.Cards), keep(res.Partials)
	res.Screened = slices.Compact(slices.Sorted(slices.Values(res.Screened)))
}
