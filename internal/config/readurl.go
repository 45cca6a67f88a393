package config

import (
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// database.read_url names the server finance reads from (docs/operations.md,
// "Finance on a replica"). It is checked here, at startup, with pgx's own
// parser (the one that will open it), so a typo stops the gateway instead
// of turning every finance page into a 503 later. Messages never echo the
// URL: it may hold a password.

func (d Database) validateReadURL() error {
	if d.ReadURL == "" {
		return nil
	}
	if _, err := pgconn.ParseConfig(d.ReadURL); err != nil {
		return errors.New("config: database.read_url (or VOXGATE_DATABASE_READ_URL): is not a valid PostgreSQL URL " +
			"(postgres://user@host:5432/db?target_session_attrs=prefer-standby, or host=… keywords)")
	}
	return nil
}

// keywordPassword finds a password in a keyword/value connection string.
var keywordPassword = regexp.MustCompile(`(^|\s)password\s*=`)

// readURLHasNoSecret refuses a read_url with a password in the file:
// secrets come from the environment only (DESIGN §3). Run right after the
// file is decoded, before the environment may override it.
func (d Database) readURLHasNoSecret() error {
	u := strings.TrimSpace(d.ReadURL)
	if u == "" {
		return nil
	}
	held := keywordPassword.MatchString(u)
	if p, err := url.Parse(u); err == nil && p.User != nil {
		_, pw := p.User.Password()
		held = held || pw
	}
	if held {
		return errors.New("database.read_url: holds a password, and secrets never come from the file: " +
			"set VOXGATE_DATABASE_READ_URL instead (or a .pgpass file)")
	}
	return nil
}
