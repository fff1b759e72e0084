package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sessiontest"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

func openStore(t testing.TB, path string, opts *sqlitestore.Options) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// cacheModes are the settings of Options.CacheSessions every behaviour
// test runs under: the default cache, and none.
var cacheModes = []struct {
	name  string
	cache int
}{{"cache", 0}, {"no cache", -1}}

func TestConformance(t *testing.T) {
	for _, mode := range cacheModes {
		t.Run(mode.name, func(t *testing.T) {
			sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
				o := &sqlitestore.Options{CacheSessions: mode.cache}
				if opts != nil {
					o.AppendHook = opts.AppendHook
				}
				return openStore(t, filepath.Join(t.TempDir(), "sessions.db"), o)
			})
		})
	}
}
