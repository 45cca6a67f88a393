package httpx

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/voxgate/voxgate/internal/apierr"
)

// maxEchoedName bounds a parameter name repeated back in an error message.
const maxEchoedName = 40

// Query parses r's query string for a route that reads the parameters
// named in allowed, and refuses with 400 INVALID_REQUEST what
// r.URL.Query() would quietly make broader (DESIGN §5):
//   - a query string that does not parse (a raw ';', a bad %-escape):
//     r.URL.Query() drops such a pair, so user_id=x;y would filter on
//     nothing and answer every user's records;
//   - a name the route does not read: a misspelt filter (userid=x) must
//     not answer unfiltered;
//   - a name given twice: which one filters would be a guess.
//
// Every route that reads its query goes through Query, so the rule holds
// everywhere at once.
func Query(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest,
			"The query string does not parse: separate parameters with '&' and percent-encode ';', '%' and '&' inside values.", err)
	}
	for name, vals := range q {
		if !slices.Contains(allowed, name) {
			return nil, apierr.Errorf(apierr.InvalidRequest, "Unknown query parameter %s; this route takes %s.",
				echo(name), takes(allowed))
		}
		if len(vals) > 1 {
			return nil, apierr.Errorf(apierr.InvalidRequest, "The query parameter %s is given more than once.", echo(name))
		}
	}
	return q, nil
}

func echo(name string) string {
	if len(name) > maxEchoedName {
		return `"` + strings.ToValidUTF8(name[:maxEchoedName], "") + `…"`
	}
	return `"` + strings.ToValidUTF8(name, "") + `"`
}

func takes(allowed []string) string {
	if len(allowed) == 0 {
		return "no parameters"
	}
	return strings.Join(allowed, ", ")
}
