package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
)

func TestReadURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, env string
		want            string // the URL loaded, when wantErr is ""
		wantErr         string
	}{
		{name: "unset reads the primary", want: ""},
		{name: "from the file", yaml: "database:\n  read_url: postgres://finance@standby:5432/voxgate?target_session_attrs=prefer-standby\n",
			want: "postgres://finance@standby:5432/voxgate?target_session_attrs=prefer-standby"},
		{name: "keywords", yaml: "database:\n  read_url: host=standby port=5433 dbname=voxgate\n", want: "host=standby port=5433 dbname=voxgate"},
		{name: "the environment overrides the file", yaml: "database:\n  read_url: postgres://a@one/voxgate\n",
			env: "postgres://b:pw@two/voxgate", want: "postgres://b:pw@two/voxgate"},
		{name: "not a URL", env: "standby.internal:5432", wantErr: "database.read_url (or VOXGATE_DATABASE_READ_URL): is not a valid PostgreSQL URL"},
		{name: "bad escape", env: "postgres://u@host/db%zz", wantErr: "is not a valid PostgreSQL URL"},
		{name: "bad port", yaml: "database:\n  read_url: postgres://u@host:notaport/db\n", wantErr: "is not a valid PostgreSQL URL"},
		{name: "a password in the file", yaml: "database:\n  read_url: postgres://u:hunter2@host/db\n", wantErr: "set VOXGATE_DATABASE_READ_URL instead"},
		{name: "a keyword password in the file", yaml: "database:\n  read_url: host=x password=hunter2\n", wantErr: "set VOXGATE_DATABASE_READ_URL instead"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := ""
			if tc.yaml != "" {
				path = filepath.Join(t.TempDir(), "voxgate.yaml")
				if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"VOXGATE_DATABASE_READ_URL": tc.env}
			cfg, err := config.Load(path, func(k string) string { return env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one with %q", err, tc.wantErr)
				}
				// The URL may hold a password: the message must not echo it.
				if strings.Contains(err.Error(), "hunter2") || (tc.env != "" && strings.Contains(err.Error(), tc.env)) {
					t.Fatalf("the error echoes the URL: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Database.ReadURL != tc.want {
				t.Fatalf("read_url: got %q, want %q", cfg.Database.ReadURL, tc.want)
			}
		})
	}
}
