// Package safety holds the gateway's safety checks (DESIGN §12) that chat,
// voice and the tools share (docs/safety.md):
//   - input: Sanitize drops control characters and neutralises
//     prompt-injection markers; WrapUserText marks user text as data
//     (sanitize.go);
//   - output: one streaming Filter, released a sentence at a time, for
//     medical claims (blocked), prescriptive tone (flagged) and personal
//     data (rejected); CheckText is the same filter over a whole text, so
//     the verdict never depends on chunking (filter.go, split.go,
//     medical.go, pii.go), held to a labelled evaluation set
//     (testdata/eval.tsv);
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
