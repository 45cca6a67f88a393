package controlplane

import (
	"github.com/pion/sdp/v3"

	"github.com/voxgate/voxgate/internal/apierr"
)

// MaxOfferAttempts is how many offers one sideband session may send to the
// provider. Each is a provider call with the server key; a phone retrying
// after a refusal needs one or two, and a session past this many is not a
// phone that will get it right next time.
const MaxOfferAttempts = 5

// checkOffer parses an app's offer before it costs a provider call: it
// must be SDP as pion reads it, with at least one audio media section.
// Anything else is the app's mistake, 400.
func checkOffer(offer string) error {
	var sd sdp.SessionDescription
	if err := sd.UnmarshalString(offer); err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "The body is not an SDP offer.", err)
	}
	for _, m := range sd.MediaDescriptions {
		if m.MediaName.Media == "audio" {
			return nil
		}
	}
	return apierr.New(apierr.InvalidRequest, "The offer has no audio section.")
}
