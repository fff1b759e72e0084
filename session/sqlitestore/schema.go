package sqlitestore

import (
	"context"
	"fmt"
)

// migrations[v] takes a file from schema version v to v+1. Append new
// steps; never edit a released one.
var migrations = []string{
	0: `
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	created_ns INTEGER NOT NULL,
	meta       TEXT NOT NULL,   -- JSON object
	last_seq   INTEGER NOT NULL DEFAULT 0,
	last_turn  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE TABLE events (
	session_id   TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	id           TEXT NOT NULL,
	time_ns      INTEGER NOT NULL,
	agent        TEXT NOT NULL,
	kind         TEXT NOT NULL,
	turn         INTEGER NOT NULL,
	text         TEXT NOT NULL,
	tool_calls   TEXT,          -- JSON array, NULL when none
	tool_call_id TEXT NOT NULL,
	tool_name    TEXT NOT NULL,
	is_error     INTEGER NOT NULL,
	state_delta  TEXT,          -- JSON object (null = delete), NULL when none
	PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE state (
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	PRIMARY KEY (session_id, key)
) STRICT, WITHOUT ROWID;
`,
	1: `
ALTER TABLE events ADD COLUMN loads TEXT; -- JSON array of session.Load, NULL when none
`,
	2: `
ALTER TABLE events ADD COLUMN summarizes INTEGER NOT NULL DEFAULT 0; -- a summary's last summarized Seq
`,
}

// migrate brings the file to SchemaVersion inside one write transaction, so
// two processes opening a new file at once cannot both create the schema.
func (s *Store) migrate(ctx context.Context) error {
	var mode string
	if err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fmt.Errorf("sqlitestore %s: open: %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlitestore %s: journal mode is %q, not \"wal\"; put the file on a local file system that supports WAL", s.path, mode)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore %s: open: %w", s.path, err)
	}
	defer func() { _ = tx.Rollback() }()
	var appID, version, tables int
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return fmt.Errorf("sqlitestore %s: open: %w", s.path, err)
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("sqlitestore %s: open: %w", s.path, err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return fmt.Errorf("sqlitestore %s: open: %w", s.path, err)
	}
	switch {
	case appID != 0 && appID != applicationID, appID == 0 && tables > 0:
		return fmt.Errorf("sqlitestore %s: %w (application_id %#x); point the store at its own file", s.path, ErrNotStore, appID)
	case version > SchemaVersion:
		return fmt.Errorf("sqlitestore %s: %w: the file has schema version %d, this build knows up to %d; upgrade skillkit or use another file",
			s.path, ErrSchemaTooNew, version, SchemaVersion)
	case version == SchemaVersion:
		return nil
	}
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("sqlitestore %s: migrate schema %d to %d: %w", s.path, v, v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			return fmt.Errorf("sqlitestore %s: migrate schema %d to %d: %w", s.path, v, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
		return fmt.Errorf("sqlitestore %s: open: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore %s: open: commit schema: %w", s.path, err)
	}
	return nil
}
