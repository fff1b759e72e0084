//go:build unix

package sqlitestore_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// TestFilePermissions checks a new store and its -wal and -shm files are
// readable by the owner only, with a umask that would let SQLite's own
// default (0644) through; that an existing file keeps its owner's mode;
// and that side files left more open than the database are narrowed.
// The umask is process-wide, so the test is not parallel.
func TestFilePermissions(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	ctx := context.Background()
	modes := func(t *testing.T, path string, want fs.FileMode) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s: mode %v, want %v", filepath.Base(p), got, want)
			}
		}
	}
	write := func(t *testing.T, st *sqlitestore.Store) {
		t.Helper()
		s, err := st.Create(ctx, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Text: "secret"}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("new file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sessions.db")
		st := openStore(t, path, nil)
		write(t, st)
		modes(t, path, 0o600)
	})
	t.Run("existing file keeps its mode", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sessions.db")
		if err := os.WriteFile(path, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		st := openStore(t, path, nil)
		write(t, st)
		modes(t, path, 0o640)
	})
	t.Run("open side files are narrowed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sessions.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		first := openStore(t, path, nil) // keeps -wal and -shm (0644) in place
		write(t, first)
		modes(t, path, 0o644)
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		second := openStore(t, path, nil)
		write(t, second)
		modes(t, path, 0o600)
	})
}
