// Package sqlitestore keeps sessions in one SQLite file (pure Go, via
// modernc.org/sqlite), so conversations and skill state survive restarts.
//
// The file runs in WAL mode with synchronous=FULL: once Append returns nil
// the event and its state changes are on disk, and a crash (even SIGKILL
// mid-append) loses neither half of a transaction. Each Append is one
// transaction that assigns the Seq, inserts the event and applies its
// StateDelta. Writers in one process share a single connection; other
// processes opening the same file wait for the write lock up to
// Options.BusyTimeout. Readers never block writers.
//
//	st, err := sqlitestore.Open(ctx, "sessions.db", nil)
//	if err != nil { ... }
//	defer st.Close()
//	s, _ := st.Create(ctx, "", nil)
//	_, _ = st.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Text: "hi"})
//
// The schema is versioned with PRAGMA user_version and migrated forward on
// Open; a file written by a newer skillkit is refused with ErrSchemaTooNew.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/driver"
)

// SchemaVersion is the schema version this build writes (PRAGMA
// user_version). Files with a lower version are migrated on Open.
const SchemaVersion = 3

// applicationID marks a SQLite file as a skillkit session store
// (PRAGMA application_id; "skkt" in ASCII).
const applicationID = 0x736b6b74

// DefaultBusyTimeout is how long an operation waits for another process's
// write lock when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 5 * time.Second

// Errors Open returns that callers branch on.
var (
	// ErrSchemaTooNew: the file was written by a newer skillkit.
	ErrSchemaTooNew = errors.New("session store schema is newer than this build supports")
	// ErrNotStore: the file is a SQLite database of something else.
	ErrNotStore = errors.New("not a skillkit session store")
)

// Options configures a Store. Nil or the zero value means defaults.
type Options struct {
	// AppendHook runs around every Append, inside its transaction (see
	// session.AppendHook). With a hook set, Append loads the whole session
	// to give the hook its snapshot, so appends cost O(events).
	AppendHook session.AppendHook
	// BusyTimeout bounds the wait for another process's write lock.
	// Zero means DefaultBusyTimeout; negative is invalid.
	BusyTimeout time.Duration
}

// Store is a session.Store backed by one SQLite file. It is safe for
// concurrent use, and several processes may open the same file.
type Store struct {
	path   string
	hook   session.AppendHook
	w      *sql.DB // one connection: serializes this process's writers
	r      *sql.DB // readers, concurrent with the writer under WAL
	closed atomic.Bool
}

var _ session.Store = (*Store)(nil)

// Open opens (creating if needed) the session store at path and migrates its
// schema to SchemaVersion. Errors name the file.
//
// Sessions hold conversations, so a new file is created readable by its
// owner only (0600, less if the umask says so); SQLite gives its -wal and
// -shm files the database file's permissions. An existing file keeps the
// mode its owner chose, and side files left more open than it (by an
// older build) are narrowed to it.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout < 0 {
		return nil, fmt.Errorf("sqlitestore %s: Options.BusyTimeout is %v; use 0 for the default (%v) or a positive duration", path, o.BusyTimeout, DefaultBusyTimeout)
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if path == "" {
		return nil, errors.New("sqlitestore: path is empty; pass the session database file name")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore %s: %w", path, err)
	}
	if strings.ContainsAny(abs, "?#") {
		return nil, fmt.Errorf("sqlitestore %s: the path contains '?' or '#', which SQLite would read as URI syntax; rename the file or its directory", abs)
	}
	if err := createPrivate(abs); err != nil {
		return nil, err
	}
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", o.BusyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", abs+"?"+busy+
		"&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlitestore %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{path: abs, hook: o.AppendHook, w: w}
	if err := s.migrate(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := restrictSideFiles(abs); err != nil {
		_ = w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", abs+"?"+busy+"&_pragma=query_only(1)")
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitestore %s: %w", abs, err)
	}
	r.SetMaxOpenConns(4)
	s.r = r
	return s, nil
}

// createPrivate creates the database file with mode 0600 when it does not
// exist yet, so SQLite, which would create it 0644, opens it instead. An
// empty file is an empty database to SQLite.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlitestore %s: create the database file: %w", path, err)
	}
	return f.Close()
}

// restrictSideFiles narrows the -wal and -shm files to the permissions of
// the database file where they allow more. SQLite creates them with the
// database's mode, but ones left by a build that created 0644 files keep
// theirs after the owner narrows the database.
func restrictSideFiles(path string) error {
	db, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("sqlitestore %s: %w", path, err)
	}
	want := db.Mode().Perm()
	for _, suffix := range []string{"-wal", "-shm"} {
		side := path + suffix
		fi, err := os.Lstat(side)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlitestore %s: %w", side, err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&^want == 0 {
			continue
		}
		if err := os.Chmod(side, fi.Mode().Perm()&want); err != nil {
			return fmt.Errorf("sqlitestore %s: narrow its permissions to the database file's (%v): %w; run chmod %o on it", side, want, err, want)
		}
	}
	return nil
}

// Path returns the absolute path of the store's file.
func (s *Store) Path() string { return s.path }

// Close implements session.Store.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return errors.Join(s.w.Close(), s.r.Close())
}

// Create implements session.Store.
func (s *Store) Create(ctx context.Context, id string, meta map[string]string) (*session.Session, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	if id == "" {
		id = session.NewID()
	}
	if err := driver.CheckID(id); err != nil {
		return nil, s.wrap(id, "create", err)
	}
	if err := driver.CheckMeta(meta); err != nil {
		return nil, s.wrap(id, "create", err)
	}
	if meta == nil {
		meta = map[string]string{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, s.wrap(id, "create", err)
	}
	created := time.Now().UTC().Round(0)
	res, err := s.w.ExecContext(ctx,
		`INSERT INTO sessions (id, created_ns, meta) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, created.UnixNano(), string(metaJSON))
	if err != nil {
		return nil, s.wrap(id, "create", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, s.wrap(id, "create", errors.Join(fmt.Errorf("%w; pick another ID or leave it empty", session.ErrExists), err))
	}
	return &session.Session{ID: id, Created: created, Meta: maps.Clone(meta), State: map[string]string{}, Events: []session.Event{}}, nil
}

// Get implements session.Store. The snapshot is read in one transaction, so
// its events and state agree.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap(id, "get", err)
	}
	defer func() { _ = tx.Rollback() }()
	sess, err := loadSession(ctx, tx, id)
	if err != nil {
		return nil, s.wrap(id, "get", err)
	}
	return sess, nil
}

// State implements session.Store.
func (s *Store) State(ctx context.Context, id string) (map[string]string, int64, error) {
	if s.closed.Load() {
		return nil, 0, session.ErrClosed
	}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, s.wrap(id, "state", err)
	}
	defer func() { _ = tx.Rollback() }()
	state, last, err := readState(ctx, tx, id)
	if err != nil {
		return nil, 0, s.wrap(id, "state", err)
	}
	return state, last, nil
}

// Append implements session.Store.
func (s *Store) Append(ctx context.Context, id string, ev session.Event) (session.Event, error) {
	if s.closed.Load() {
		return session.Event{}, session.ErrClosed
	}
	e, err := driver.Prepare(ev, time.Now())
	if err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: take the write lock now
	if err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	defer func() { _ = tx.Rollback() }()
	var snap *session.Session
	if s.hook != nil {
		if snap, err = loadSession(ctx, tx, id); err != nil {
			return session.Event{}, s.wrap(id, "append", err)
		}
	}
	commit := func(e *session.Event) error { return insertEvent(ctx, tx, id, e) }
	if err := driver.RunHook(ctx, s.hook, snap, &e, commit); err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	if err := tx.Commit(); err != nil {
		return session.Event{}, s.wrap(id, "append: commit", err)
	}
	return e.Clone(), nil
}

// AppendFunc implements session.Store: one write transaction reads the
// state, runs build and inserts every event it returns.
func (s *Store) AppendFunc(ctx context.Context, id string, build session.BuildFunc) ([]session.Event, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: take the write lock now
	if err != nil {
		return nil, s.wrap(id, "append", err)
	}
	defer func() { _ = tx.Rollback() }()
	state, last, err := readState(ctx, tx, id)
	if err != nil {
		return nil, s.wrap(id, "append", err)
	}
	evs, err := build(state, last)
	if err != nil {
		return nil, s.wrap(id, "append", err)
	}
	now := time.Now()
	out := make([]session.Event, 0, len(evs))
	for i, ev := range evs {
		e, err := driver.Prepare(ev, now)
		if err != nil {
			return nil, s.wrap(id, fmt.Sprintf("append event %d of %d", i+1, len(evs)), err)
		}
		var snap *session.Session
		if s.hook != nil {
			if snap, err = loadSession(ctx, tx, id); err != nil {
				return nil, s.wrap(id, "append", err)
			}
		}
		commit := func(e *session.Event) error { return insertEvent(ctx, tx, id, e) }
		if err := driver.RunHook(ctx, s.hook, snap, &e, commit); err != nil {
			return nil, s.wrap(id, fmt.Sprintf("append event %d of %d", i+1, len(evs)), err)
		}
		out = append(out, e.Clone())
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap(id, "append: commit", err)
	}
	return out, nil
}

// readState reads a session's state and newest Seq inside q.
func readState(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, id string) (map[string]string, int64, error) {
	var last int64
	if err := q.QueryRowContext(ctx, `SELECT last_seq FROM sessions WHERE id = ?`, id).Scan(&last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, 0, driver.NotFound(id)
		}
		return nil, 0, err
	}
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM state WHERE session_id = ?`, id)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	state := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, 0, err
		}
		state[k] = v
	}
	return state, last, rows.Err()
}

// List implements session.Store.
func (s *Store) List(ctx context.Context) ([]session.Info, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, created_ns, meta, last_seq FROM sessions ORDER BY created_ns, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore %s: list: %w", s.path, err)
	}
	defer rows.Close()
	out := []session.Info{}
	for rows.Next() {
		var in session.Info
		var created int64
		var meta string
		if err := rows.Scan(&in.ID, &created, &meta, &in.LastSeq); err != nil {
			return nil, fmt.Errorf("sqlitestore %s: list: %w", s.path, err)
		}
		in.Created = time.Unix(0, created).UTC()
		if err := json.Unmarshal([]byte(meta), &in.Meta); err != nil {
			return nil, fmt.Errorf("sqlitestore %s: list: session %q: corrupt meta column: %w", s.path, in.ID, err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore %s: list: %w", s.path, err)
	}
	return out, nil
}

// Delete implements session.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if s.closed.Load() {
		return session.ErrClosed
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(id, "delete", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range []string{`DELETE FROM state WHERE session_id = ?`, `DELETE FROM events WHERE session_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return s.wrap(id, "delete", err)
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return s.wrap(id, "delete", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return s.wrap(id, "delete", errors.Join(driver.NotFound(id), err))
	}
	if err := tx.Commit(); err != nil {
		return s.wrap(id, "delete: commit", err)
	}
	return nil
}

// wrap names the file, the session and the operation. ErrNotFound already
// names the session, and context errors pass through unchanged in the chain.
func (s *Store) wrap(id, op string, err error) error {
	if errors.Is(err, session.ErrNotFound) {
		return fmt.Errorf("sqlitestore %s: %s: %w", s.path, op, err)
	}
	return fmt.Errorf("sqlitestore %s: session %q: %s: %w", s.path, id, op, err)
}

// queryer is what loadSession needs from a transaction.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func loadSession(ctx context.Context, q queryer, id string) (*session.Session, error) {
	sess := &session.Session{ID: id, State: map[string]string{}, Events: []session.Event{}}
	var created int64
	var meta string
	err := q.QueryRowContext(ctx, `SELECT created_ns, meta FROM sessions WHERE id = ?`, id).Scan(&created, &meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, driver.NotFound(id)
	}
	if err != nil {
		return nil, err
	}
	sess.Created = time.Unix(0, created).UTC()
	if err := json.Unmarshal([]byte(meta), &sess.Meta); err != nil {
		return nil, fmt.Errorf("corrupt meta column: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT seq, id, time_ns, agent, kind, turn, text, tool_calls, tool_call_id, tool_name, is_error, state_delta, loads, summarizes
		FROM events WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e session.Event
		var tns int64
		var kind string
		var calls, delta, loads sql.NullString
		if err := rows.Scan(&e.Seq, &e.ID, &tns, &e.Agent, &kind, &e.Turn, &e.Text, &calls, &e.ToolCallID, &e.ToolName, &e.IsError, &delta, &loads, &e.Summarizes); err != nil {
			return nil, err
		}
		e.Kind = session.Kind(kind)
		e.Time = time.Unix(0, tns).UTC()
		if calls.Valid {
			if err := json.Unmarshal([]byte(calls.String), &e.ToolCalls); err != nil {
				return nil, fmt.Errorf("event %d: corrupt tool_calls column: %w", e.Seq, err)
			}
		}
		if delta.Valid {
			if err := json.Unmarshal([]byte(delta.String), &e.StateDelta); err != nil {
				return nil, fmt.Errorf("event %d: corrupt state_delta column: %w", e.Seq, err)
			}
		}
		if loads.Valid {
			if err := json.Unmarshal([]byte(loads.String), &e.Loads); err != nil {
				return nil, fmt.Errorf("event %d: corrupt loads column: %w", e.Seq, err)
			}
		}
		sess.Events = append(sess.Events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	srows, err := q.QueryContext(ctx, `SELECT key, value FROM state WHERE session_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	for srows.Next() {
		var k, v string
		if err := srows.Scan(&k, &v); err != nil {
			return nil, err
		}
		sess.State[k] = v
	}
	return sess, srows.Err()
}

// minTime and maxTime bound what fits in int64 Unix nanoseconds.
var (
	minTime = time.Unix(0, -1<<63).UTC()
	maxTime = time.Unix(0, 1<<63-1).UTC()
)

// insertEvent assigns e's Seq and Turn, inserts it and applies its delta,
// all inside tx.
func insertEvent(ctx context.Context, tx *sql.Tx, id string, e *session.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.Time.Before(minTime) || e.Time.After(maxTime) {
		return fmt.Errorf("%w: event.Time %v is outside what the store keeps (%d..%d); pass a time in that range or leave it zero",
			session.ErrInvalidEvent, e.Time, minTime.Year(), maxTime.Year())
	}
	inc := 0
	if e.Kind.StartsTurn() {
		inc = 1
	}
	err := tx.QueryRowContext(ctx, `UPDATE sessions SET last_seq = last_seq + 1, last_turn = last_turn + ? WHERE id = ? RETURNING last_seq, last_turn`,
		inc, id).Scan(&e.Seq, &e.Turn)
	if errors.Is(err, sql.ErrNoRows) {
		return driver.NotFound(id)
	}
	if err != nil {
		return err
	}
	var calls, delta, loads sql.NullString
	if len(e.ToolCalls) > 0 {
		b, err := json.Marshal(e.ToolCalls)
		if err != nil {
			return err
		}
		calls = sql.NullString{String: string(b), Valid: true}
	}
	if len(e.StateDelta) > 0 {
		b, err := json.Marshal(e.StateDelta)
		if err != nil {
			return err
		}
		delta = sql.NullString{String: string(b), Valid: true}
	}
	if len(e.Loads) > 0 {
		b, err := json.Marshal(e.Loads)
		if err != nil {
			return err
		}
		loads = sql.NullString{String: string(b), Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (session_id, seq, id, time_ns, agent, kind, turn, text, tool_calls, tool_call_id, tool_name, is_error, state_delta, loads, summarizes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, e.Seq, e.ID, e.Time.UnixNano(), e.Agent, string(e.Kind), e.Turn, e.Text, calls, e.ToolCallID, e.ToolName, e.IsError, delta, loads, e.Summarizes); err != nil {
		return err
	}
	keys := make([]string, 0, len(e.StateDelta))
	for k := range e.StateDelta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var err error
		if v := e.StateDelta[k]; v == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM state WHERE session_id = ? AND key = ?`, id, k)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO state (session_id, key, value) VALUES (?, ?, ?)
				ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`, id, k, *v)
		}
		if err != nil {
			return fmt.Errorf("apply state key %q: %w", k, err)
		}
	}
	return nil
}
