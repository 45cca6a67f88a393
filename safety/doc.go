// Package safety holds the gateway's safety checks (DESIGN §12) that chat,
// voice and the tools share (docs/safety.md):
//   - input: Sanitize drops control characters and neutralises
//     prompt-injection markers; WrapUserText marks user text as data
//     (sanitize.go);
//   - output: one streaming Filter for medical claims (blocked),
//     prescriptive tone (flagged) and personal data (rejected), in
//     English and Spanish; text goes out word by word until a sentence's
//     first risk word (a word still arriving as soon as no risk word,
//     street type, name or identifier could begin with it), and from
//     there the sentence is held and judged whole; CheckText is the same filter over a whole text, so the
//     verdict never depends on chunking (filter.go, split.go, release.go,
//     lexicon.go, pii.go, pii_ids.go);
//   - medical claims: rules where rules are right, a linear model trained
//     on a labelled corpus for the rest, measured on a held-out split of
//     it (claims.go, claimrules.go, medical.go, cues.go, lang.go,
//     testdata/corpus.tsv, cmd/corpus);
//   - numeric ranges: every write's values are checked against the
//     physiological range of what they measure, and a value outside it is
//     an unsafe_value Flag that blocks the write (ranges.go);
//   - the model's view of a profile: ModelProfile renders a context tool's
//     result with only the fields a model may see, marked as data, not
//     instructions (profile.go);
//   - safety identifiers: Identifiers give the salted hash of a user that a
//     provider may see, stable per user and deployment and useless without
//     the key (identifier.go).
package safety
