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

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
		o := &sqlitestore.Options{}
		if opts != nil {
			o.AppendHook = opts.AppendHook
		}
		return openStore(t, filepath.Join(t.TempDir(), "sessions.db"), o)
	})
}
