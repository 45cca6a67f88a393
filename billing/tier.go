package billing

import "regexp"

// A provider may serve a request on a tier other than its standard one and
// bill it at a multiple of the standard prices: OpenAI's priority tier at
// twice them, flex (and the Batch API) at half (models.md, "other OpenAI
// price modifiers"). The tier is the one the response named, not the one
// asked ("auto" is answered with the tier that served), so a record keeps
// what its provider said and is priced by it here.

// tierName is the shape of a tier a record may hold: what the column's
// check allows (migration 0088).
var tierName = regexp.MustCompile(`^[a-z0-9_]{0,32}$`)

// tierHalves is tier's price multiple in halves: 2 (×1) for the standard
// tier, named or not, 4 for priority, 1 for flex and batch. A tier with no
// known multiple leaves the record unpriced rather than guessed (Unpriced
// names it): the table has no price for it.
func tierHalves(tier string) (int64, bool) {
	switch tier {
	case "", "default":
		return 2, true
	case "priority":
		return 4, true
	case "flex", "batch":
		return 1, true
	}
	return 0, false
}

// addTiers is the tier of u and v summed: the one they share, or the
// non-empty usage's; usage served on two tiers has no one multiple, and
// is named "mixed", which prices as no tier does (unpriced, never a
// guess).
//
// A tier no call named ("", an estimate's or a provider that names none)
// and "default" are one standard tier: summed, they are "default", not
// mixed.
func addTiers(u, v Usage) string {
	switch {
	case u.ServiceTier == v.ServiceTier:
		return u.ServiceTier
	case v.IsZero():
		return u.ServiceTier
	case u.IsZero():
		return v.ServiceTier
	case standardTier(u.ServiceTier) && standardTier(v.ServiceTier):
		return "default"
	}
	return "mixed"
}

func standardTier(tier string) bool { return tier == "" || tier == "default" }
