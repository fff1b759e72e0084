package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// rawExec runs statements on path with a plain connection, bypassing the
// store, to build files in odd states.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestOpenSchema(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr error
		wantMsg []string
	}{
		{"new file", func(t *testing.T, path string) {}, nil, nil},
		{"current version reopens with data", func(t *testing.T, path string) {
			st := openStore(t, path, nil)
			if _, err := st.Create(ctx, "kept", map[string]string{"a": "b"}); err != nil {
				t.Fatal(err)
			}
			st.Close()
		}, nil, nil},
		{"newer version", func(t *testing.T, path string) {
			openStore(t, path, nil).Close()
			rawExec(t, path, fmt.Sprintf("PRAGMA user_version = %d", sqlitestore.SchemaVersion+1))
		}, sqlitestore.ErrSchemaTooNew, []string{fmt.Sprintf("schema version %d", sqlitestore.SchemaVersion+1),
			fmt.Sprintf("up to %d", sqlitestore.SchemaVersion), "upgrade skillkit"}},
		{"someone else's database", func(t *testing.T, path string) {
			rawExec(t, path, "CREATE TABLE notes (x TEXT)")
		}, sqlitestore.ErrNotStore, []string{"own file"}},
		{"other application id", func(t *testing.T, path string) {
			rawExec(t, path, "PRAGMA application_id = 42")
		}, sqlitestore.ErrNotStore, []string{"0x2a"}},
		{"not SQLite at all", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"not a database"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			tt.prepare(t, path)
			st, err := sqlitestore.Open(ctx, path, nil)
			if tt.wantErr == nil && tt.wantMsg == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer st.Close()
				list, err := st.List(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(tt.name, "reopens") && (len(list) != 1 || list[0].Meta["a"] != "b") {
					t.Fatalf("reopened store lists %+v, want the session created before", list)
				}
				return
			}
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			for _, m := range append(tt.wantMsg, path) {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not contain %q", err, m)
				}
			}
		})
	}
}

func TestOpenArguments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		opts *sqlitestore.Options
		want string
	}{
		{"negative busy timeout", filepath.Join(dir, "a.db"), &sqlitestore.Options{BusyTimeout: -time.Second}, "BusyTimeout"},
		{"empty path", "", nil, "path is empty"},
		{"URI syntax in path", filepath.Join(dir, "a?mode=ro.db"), nil, "'?'"},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "a.db"), nil, filepath.Join(dir, "no", "such", "dir", "a.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := sqlitestore.Open(ctx, tt.path, tt.opts)
			if err == nil {
				st.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

// TestBusyTimeout holds the write lock from another connection (as another
// process would) and checks that Append gives up after BusyTimeout, naming
// the file, then succeeds once the lock is released.
func TestBusyTimeout(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	const timeout = 200 * time.Millisecond
	st := openStore(t, path, &sqlitestore.Options{BusyTimeout: timeout})
	if _, err := st.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = st.Append(ctx, "s", session.Event{Kind: session.KindUser})
	waited := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Append while locked: error = %v, want a busy error naming %s", err, path)
	}
	if waited < timeout || waited > timeout+3*time.Second {
		t.Errorf("Append gave up after %v, want about %v", waited, timeout)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if ev, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser}); err != nil || ev.Seq != 1 {
		t.Fatalf("Append after unlock = seq %d, %v; want seq 1", ev.Seq, err)
	}
}

// TestTwoStoresOneFile appends to one session through two Store values on
// the same file (separate connection pools, as two processes have) and
// checks Seq stays gapless and both see every event.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openStore(t, path, nil)
	b := openStore(t, path, nil)
	if _, err := a.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, "s", nil); !errors.Is(err, session.ErrExists) {
		t.Fatalf("second Create through the other store: %v, want ErrExists", err)
	}
	const each = 20
	var wg sync.WaitGroup
	for i, st := range []*sqlitestore.Store{a, b} {
		wg.Go(func() {
			for n := range each {
				if _, err := st.Append(ctx, "s", session.Event{Kind: session.KindAssistant, Agent: fmt.Sprint(i),
					StateDelta: map[string]*string{fmt.Sprint("n", i): session.Ptr(fmt.Sprint(n))}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, st := range []*sqlitestore.Store{a, b} {
		s, err := st.Get(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if s.LastSeq() != 2*each || len(s.Events) != 2*each || s.State["n0"] != "19" || s.State["n1"] != "19" {
			t.Fatalf("%s sees last seq %d, %d events, state %v", st.Path(), s.LastSeq(), len(s.Events), s.State)
		}
		for i, ev := range s.Events {
			if ev.Seq != int64(i+1) {
				t.Fatalf("event %d has Seq %d", i, ev.Seq)
			}
		}
	}
}

func TestEventTimeRange(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "t.db"), nil)
	ctx := context.Background()
	if _, err := st.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		when time.Time
		ok   bool
	}{
		{time.Unix(0, 1<<63-1), true}, // the last representable instant
		{time.Unix(0, -1<<63), true},  // the first
		{time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		ev, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser, Time: tt.when})
		if tt.ok != (err == nil) {
			t.Errorf("Append at %v: error = %v, want ok=%v", tt.when, err, tt.ok)
		}
		if err != nil && !errors.Is(err, session.ErrInvalidEvent) {
			t.Errorf("error %v is not ErrInvalidEvent", err)
		}
		if err == nil && !ev.Time.Equal(tt.when) {
			t.Errorf("stored time %v, want %v", ev.Time, tt.when)
		}
	}
}

// schemaV1 is the schema of files written by releases with schema version
// 1, as they were released.
var schemaV1 = []string{
	`PRAGMA journal_mode = wal`,
	`CREATE TABLE sessions (id TEXT PRIMARY KEY, created_ns INTEGER NOT NULL, meta TEXT NOT NULL,
		last_seq INTEGER NOT NULL DEFAULT 0, last_turn INTEGER NOT NULL DEFAULT 0) STRICT`,
	`CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, seq INTEGER NOT NULL,
		id TEXT NOT NULL, time_ns INTEGER NOT NULL, agent TEXT NOT NULL, kind TEXT NOT NULL, turn INTEGER NOT NULL,
		text TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL, is_error INTEGER NOT NULL,
		state_delta TEXT, PRIMARY KEY (session_id, seq)) STRICT, WITHOUT ROWID`,
	`CREATE TABLE state (session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, key TEXT NOT NULL,
		value TEXT NOT NULL, PRIMARY KEY (session_id, key)) STRICT, WITHOUT ROWID`,
	`PRAGMA user_version = 1`,
	`PRAGMA application_id = 1936419700`,
}

// A file of schema version 1 is migrated on Open: its events read back
// with no loads, and new events keep theirs.
func TestMigrateFromV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	rawExec(t, path, append(schemaV1,
		`INSERT INTO sessions VALUES ('old', 1, '{}', 1, 1)`,
		`INSERT INTO events VALUES ('old', 1, 'e1', 1, 'a', 'user', 1, 'hi', NULL, '', '', 0, '{"k":"v"}')`,
		`INSERT INTO state VALUES ('old', 'k', 'v')`)...)
	st := openStore(t, path, nil)
	ev, err := st.Append(ctx, "old", session.Event{Kind: session.KindTool, ToolCallID: "c", Loads: []session.Load{{Skill: "pdf", Docs: []string{"a.md"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Get(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Events) != 2 || s.Events[0].Text != "hi" || s.Events[0].Loads != nil || s.State["k"] != "v" {
		t.Fatalf("migrated session = %+v", s)
	}
	if got := s.Events[1].Loads; len(got) != 1 || got[0].Skill != "pdf" || got[0].Docs[0] != "a.md" || ev.Seq != 2 {
		t.Fatalf("new event's loads = %+v (seq %d)", got, ev.Seq)
	}
}
