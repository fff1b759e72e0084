// Package sqlitestore keeps sessions in one SQLite file (pure Go, via
// modernc.org/sqlite), so conversations and skill state survive restarts.
//
// The file runs in WAL mode with synchronous=FULL: once Append returns nil
// the event and its state changes are on disk, and a crash (even SIGKILL
// mid-append) loses neither half of a transaction. Each Append is one
// transaction that assigns the Seq, inserts the event and applies its
// StateDelta. Writers in one process share a single connection; other
// processes opening the same file wait for the write lock up to
// Options.BusyTimeout. Readers never wait for writers (a read borrows the
// writer's connection for its first query only when that is idle).
//
// A Store keeps the recently used sessions in memory (Options.CacheSessions),
// so reading a session costs one small query plus reading the events added
// since, not a read of every event. The file stays the truth: every use of
// a cached copy first checks it against the file's row for the session, so
// writes by other processes, deletions and sessions created again under
// the same ID are seen at once.
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
	// session.AppendHook). With a hook set, every appended event hands the
	// hook a copy of the whole session, so appends cost O(events) in
	// copying (and a full read of the file when the session is not
	// cached).
	AppendHook session.AppendHook
	// BusyTimeout bounds the wait for another process's write lock.
	// Zero means DefaultBusyTimeout; negative is invalid.
	BusyTimeout time.Duration
	// CacheSessions bounds how many sessions the Store keeps in memory,
	// least recently used evicted first. A cached session holds its
	// events and state, so reads, State and AppendFunc read only what was
	// added since; one that is not cached is read whole. Zero means
	// DefaultCacheSessions; negative disables the cache.
	CacheSessions int
}

// Store is a session.Store backed by one SQLite file. It is safe for
// concurrent use, and several processes may open the same file.
type Store struct {
	path string
	hook session.AppendHook
	w    *sql.DB // one connection: serializes this process's writers
	r    *sql.DB // readers, concurrent with the writer under WAL
	// writing is held while w's connection is in use, by writers for a
	// whole transaction and by readers for one short query when they
	// find it free (see snapshot).
	writing chan struct{}
	ws      writeStmts
	rs      readStmts
	cache   *cache // nil when disabled
	closed  atomic.Bool
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
	s := &Store{path: abs, hook: o.AppendHook, w: w, writing: make(chan struct{}, 1), cache: newCache(o.CacheSessions)}
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
	if err := errors.Join(prepare(ctx, w, s.ws.targets()), prepare(ctx, r, s.rs.targets())); err != nil {
		_ = closeStmts(s.ws.targets())
		_ = closeStmts(s.rs.targets())
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("sqlitestore %s: open: %w", abs, err)
	}
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
	return errors.Join(closeStmts(s.ws.targets()), closeStmts(s.rs.targets()), s.w.Close(), s.r.Close())
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
	if err := s.lockWriter(ctx); err != nil {
		return nil, s.wrap(id, "create", err)
	}
	res, err := s.w.ExecContext(ctx,
		`INSERT INTO sessions (id, created_ns, meta) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, created.UnixNano(), string(metaJSON))
	s.unlockWriter()
	if err != nil {
		return nil, s.wrap(id, "create", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, s.wrap(id, "create", errors.Join(fmt.Errorf("%w; pick another ID or leave it empty", session.ErrExists), err))
	}
	p := &snapshot{created: created.UnixNano(), meta: maps.Clone(meta), events: []session.Event{}, state: map[string]string{}}
	s.cache.put(id, p)
	return p.session(id), nil
}

// Get implements session.Store. The snapshot is one read of the file, so
// its events and state agree.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	p, err := s.snapshot(ctx, nil, id, nil)
	if err != nil {
		return nil, s.wrap(id, "get", err)
	}
	return p.session(id), nil
}

// State implements session.Store. A session that is not cached has its
// state table read, not its events, and stays uncached.
func (s *Store) State(ctx context.Context, id string) (map[string]string, int64, error) {
	if s.closed.Load() {
		return nil, 0, session.ErrClosed
	}
	if s.cache.get(id) == nil {
		tx, err := s.r.BeginTx(ctx, nil) // two reads, one snapshot
		if err != nil {
			return nil, 0, s.wrap(id, "state", err)
		}
		defer func() { _ = tx.Rollback() }()
		pos, err := readPos(ctx, tx.StmtContext(ctx, s.rs.pos), id)
		if err != nil {
			return nil, 0, s.wrap(id, "state", err)
		}
		state, err := readState(ctx, tx.StmtContext(ctx, s.rs.state), id)
		if err != nil {
			return nil, 0, s.wrap(id, "state", err)
		}
		return state, pos.lastSeq, nil
	}
	p, err := s.snapshot(ctx, nil, id, nil)
	if err != nil {
		return nil, 0, s.wrap(id, "state", err)
	}
	return maps.Clone(p.state), p.lastSeq, nil
}

// snapshot returns session id as the file has it now: inside tx, a write
// transaction in which the session's position pos was read, or with tx
// (and pos) nil on the reader pool.
func (s *Store) snapshot(ctx context.Context, tx *sql.Tx, id string, pos *position) (*snapshot, error) {
	st := &s.rs
	if tx != nil {
		st = &s.ws.readStmts
	}
	bind := func(p *sql.Stmt) *sql.Stmt {
		if tx == nil {
			return p
		}
		return tx.StmtContext(ctx, p)
	}
	var p *snapshot
	var err error
	if tx == nil && s.tryLockWriter() {
		// The writer's connection, when free, has the pages the last
		// write touched in its cache; a reader connection drops its
		// whole cache after every write, and reading them back cost more
		// than the query itself. Only this short check runs there.
		p, err = s.cached(ctx, bind, &s.ws.readStmts, id, pos)
		s.unlockWriter()
	} else {
		p, err = s.cached(ctx, bind, st, id, pos)
	}
	if p == nil && err == nil {
		if tx == nil {
			// Three reads: one transaction keeps them one snapshot.
			rtx, err := s.r.BeginTx(ctx, nil)
			if err != nil {
				return nil, err
			}
			defer func() { _ = rtx.Rollback() }()
			tx = rtx
		}
		if p, err = load(ctx, bind, st, id); err == nil {
			s.cache.put(id, p)
		}
	}
	if errors.Is(err, session.ErrNotFound) {
		s.cache.drop(id)
	}
	return p, err
}

// cached returns the cached copy of session id checked against the file
// (pos, or one qPos query when pos is nil) and caught up with it; nil
// when there is none or it cannot be caught up, so the caller reads the
// session whole.
func (s *Store) cached(ctx context.Context, bind func(*sql.Stmt) *sql.Stmt, st *readStmts, id string, pos *position) (*snapshot, error) {
	base := s.cache.get(id)
	if base == nil {
		return nil, nil
	}
	if pos == nil {
		p, err := readPos(ctx, bind(st.pos), id)
		if err != nil {
			return nil, err
		}
		pos = &p
	}
	switch {
	case pos.created != base.created || pos.lastSeq < base.lastSeq:
		return nil, nil
	case pos.lastSeq == base.lastSeq:
		return base, nil
	}
	p, ok, err := catchUp(ctx, bind(st.head), id, base)
	if err != nil || !ok {
		return nil, err
	}
	s.cache.put(id, p)
	return p, nil
}

// lockWriter takes the writer connection, waiting for it as long as ctx
// allows.
func (s *Store) lockWriter(ctx context.Context) error {
	select {
	case s.writing <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryLockWriter takes the writer connection if it is free.
func (s *Store) tryLockWriter() bool {
	select {
	case s.writing <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s *Store) unlockWriter() { <-s.writing }

// beginWrite takes the writer connection and begins a write transaction
// on it (BEGIN IMMEDIATE: the file's write lock is taken now); endWrite
// rolls back what was not committed and gives the connection back.
func (s *Store) beginWrite(ctx context.Context) (*sql.Tx, error) {
	if err := s.lockWriter(ctx); err != nil {
		return nil, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		s.unlockWriter()
		return nil, err
	}
	return tx, nil
}

func (s *Store) endWrite(tx *sql.Tx) {
	_ = tx.Rollback()
	s.unlockWriter()
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
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	defer s.endWrite(tx)
	pos, err := readPos(ctx, tx.StmtContext(ctx, s.ws.pos), id)
	if err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	// base is the session before the event, when known; without a hook
	// nothing needs it, so it is only the cached copy if that is current.
	var base *snapshot
	var snap *session.Session
	if s.hook != nil {
		if base, err = s.snapshot(ctx, tx, id, &pos); err != nil {
			return session.Event{}, s.wrap(id, "append", err)
		}
		snap = base.session(id)
	} else if c := s.cache.get(id); c != nil && c.created == pos.created && c.lastSeq == pos.lastSeq {
		base = c
	}
	var stored session.Event
	commit := func(e *session.Event) (err error) {
		stored, err = insertEvent(ctx, tx, &s.ws, id, e, &pos)
		return err
	}
	if err := driver.RunHook(ctx, s.hook, snap, &e, commit); err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	if err := advance(ctx, tx, &s.ws, id, pos); err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	if err := tx.Commit(); err != nil {
		return session.Event{}, s.wrap(id, "append: commit", err)
	}
	if base != nil {
		s.cache.put(id, base.extend(stored, e.StateDelta))
	}
	return e.Clone(), nil
}

// AppendFunc implements session.Store: one write transaction reads the
// state, runs build and inserts every event it returns.
func (s *Store) AppendFunc(ctx context.Context, id string, build session.BuildFunc) ([]session.Event, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, s.wrap(id, "append", err)
	}
	defer s.endWrite(tx)
	// Read under the write lock: what is read stays current until the
	// commit. cur, the whole session, is kept only for a hook or a cached
	// copy; otherwise the state table is all build needs.
	pos, err := readPos(ctx, tx.StmtContext(ctx, s.ws.pos), id)
	if err != nil {
		return nil, s.wrap(id, "append", err)
	}
	var cur *snapshot
	var state map[string]string
	if s.hook != nil || s.cache.get(id) != nil {
		if cur, err = s.snapshot(ctx, tx, id, &pos); err != nil {
			return nil, s.wrap(id, "append", err)
		}
		state = maps.Clone(cur.state)
	} else if state, err = readState(ctx, tx.StmtContext(ctx, s.ws.state), id); err != nil {
		return nil, s.wrap(id, "append", err)
	}
	evs, err := build(state, pos.lastSeq)
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
			snap = cur.session(id)
		}
		var stored session.Event
		commit := func(e *session.Event) (err error) {
			stored, err = insertEvent(ctx, tx, &s.ws, id, e, &pos)
			return err
		}
		if err := driver.RunHook(ctx, s.hook, snap, &e, commit); err != nil {
			return nil, s.wrap(id, fmt.Sprintf("append event %d of %d", i+1, len(evs)), err)
		}
		if cur != nil {
			cur = cur.extend(stored, e.StateDelta)
		}
		out = append(out, e.Clone())
	}
	if len(out) > 0 {
		if err := advance(ctx, tx, &s.ws, id, pos); err != nil {
			return nil, s.wrap(id, "append", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, s.wrap(id, "append: commit", err)
	}
	if cur != nil {
		s.cache.put(id, cur)
	}
	return out, nil
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
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return s.wrap(id, "delete", err)
	}
	defer s.endWrite(tx)
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
	s.cache.drop(id)
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
