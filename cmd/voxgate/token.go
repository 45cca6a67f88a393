package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
)

func runToken(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("token", "Prints an HS256 JWT signed with VOXGATE_JWT_SECRET (or the dev secret in ./.voxgate/).", stderr)
	sub := fs.String("sub", "", "user id (required)")
	role := fs.String("role", "", "role: admin or finance (default: a plain user)")
	plan := fs.String("plan", "", "plan claim, e.g. free or pro")
	ttl := fs.Duration("ttl", time.Hour, "lifetime")
	iss := fs.String("iss", "", "issuer claim")
	aud := fs.String("aud", "", "audience claim")
	if err := fs.Parse(args); err != nil {
		return err
	}
	secret, err := signingSecret(getenv)
	if err != nil {
		return err
	}
	tok, err := auth.Mint(auth.MintParams{
		Secret: []byte(secret), Subject: *sub, Role: *role, Plan: *plan,
		Issuer: *iss, Audience: *aud, TTL: *ttl,
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// signingSecret is VOXGATE_JWT_SECRET, else the dev secret kept by
// 'voxgate dev', so tokens for a dev server work without setup.
func signingSecret(getenv func(string) string) (string, error) {
	if s := getenv("VOXGATE_JWT_SECRET"); s != "" {
		return s, nil
	}
	b, err := os.ReadFile(filepath.Join(devDir, "jwt-secret"))
	if err != nil {
		return "", errors.New("set VOXGATE_JWT_SECRET, or run 'voxgate dev' once to create a dev secret")
	}
	return strings.TrimSpace(string(b)), nil
}
