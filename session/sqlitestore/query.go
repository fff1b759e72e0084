package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/driver"
)

// The hot statements. Each is prepared once per pool at Open: parsing
// and planning them again on every call was a quarter of a step.
const (
	// qPos is the cheap check every use of a cached session starts with:
	// created_ns tells a session from one deleted and created again
	// under its ID, last_seq says how far the cached copy is behind.
	// Writers number their events from it too.
	qPos = `SELECT created_ns, last_seq, last_turn FROM sessions WHERE id = ?`
	// qHead catches a cached copy up: one statement, hence one snapshot
	// of the file, so the created_ns and last_seq it repeats vouch for
	// the events it returns (those after ?2; one row of NULL event
	// columns when there are none). No session, no rows.
	qHead = `SELECT s.created_ns, s.last_seq, coalesce(e.seq, 0), coalesce(e.id, ''), coalesce(e.time_ns, 0), coalesce(e.agent, ''),
		coalesce(e.kind, ''), coalesce(e.turn, 0), coalesce(e.text, ''), e.tool_calls, coalesce(e.tool_call_id, ''), coalesce(e.tool_name, ''),
		coalesce(e.is_error, 0), e.state_delta, e.loads, coalesce(e.summarizes, 0)
		FROM sessions s LEFT JOIN events e ON e.session_id = s.id AND e.seq > ?2 AND e.seq <= s.last_seq
		WHERE s.id = ?1 ORDER BY e.seq`
	qMeta  = `SELECT meta FROM sessions WHERE id = ?`
	qState = `SELECT key, value FROM state WHERE session_id = ?`
	// qAdvance records a transaction's events in the session row, once
	// per transaction: the writer numbered them from qPos under the write
	// lock (RETURNING, to number them in SQL, cost four times as much).
	qAdvance = `UPDATE sessions SET last_seq = ?, last_turn = ? WHERE id = ?`
	qInsert  = `INSERT INTO events (session_id, seq, id, time_ns, agent, kind, turn, text, tool_calls, tool_call_id, tool_name, is_error, state_delta, loads, summarizes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qSetKey = `INSERT INTO state (session_id, key, value) VALUES (?, ?, ?)
		ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`
	qDelKey = `DELETE FROM state WHERE session_id = ? AND key = ?`
)

// readStmts are the statements a session read needs, prepared on one pool.
type readStmts struct {
	pos, head, meta, state *sql.Stmt
}

// writeStmts are the writer pool's: the reads an append starts with, and
// the writes.
type writeStmts struct {
	readStmts
	advance, insert, setKey, delKey *sql.Stmt
}

// prepare prepares each query into its *sql.Stmt. On error the caller
// closes those made (closeStmts).
func prepare(ctx context.Context, db *sql.DB, into map[**sql.Stmt]string) error {
	for dst, q := range into {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			first, _, _ := strings.Cut(q, "\n")
			return fmt.Errorf("prepare %q: %w", first, err)
		}
		*dst = st
	}
	return nil
}

func (r *readStmts) targets() map[**sql.Stmt]string {
	return map[**sql.Stmt]string{&r.pos: qPos, &r.head: qHead, &r.meta: qMeta, &r.state: qState}
}

func (w *writeStmts) targets() map[**sql.Stmt]string {
	m := w.readStmts.targets()
	m[&w.advance], m[&w.insert], m[&w.setKey], m[&w.delKey] = qAdvance, qInsert, qSetKey, qDelKey
	return m
}

// closeStmts closes every statement of targets that was prepared.
func closeStmts(targets map[**sql.Stmt]string) error {
	var errs []error
	for st := range targets {
		if *st != nil {
			errs = append(errs, (*st).Close())
		}
	}
	return errors.Join(errs...)
}

// position is where a session stands: which incarnation, and its newest
// Seq and Turn.
type position struct {
	created, lastSeq int64
	lastTurn         int
}

// readPos runs pos (qPos, bound to a transaction or not).
func readPos(ctx context.Context, pos *sql.Stmt, id string) (position, error) {
	var p position
	err := pos.QueryRowContext(ctx, id).Scan(&p.created, &p.lastSeq, &p.lastTurn)
	if errors.Is(err, sql.ErrNoRows) {
		return position{}, driver.NotFound(id)
	}
	return p, err
}

// eventRow is an event as the events table holds it.
type eventRow struct {
	seq, tns, summarizes  int64
	id, agent, kind, text string
	toolCallID, toolName  string
	turn                  int
	isError               bool
	calls, delta, loads   sql.NullString
}

// event decodes r, as every read of the file does.
func (r *eventRow) event() (session.Event, error) {
	e := session.Event{Seq: r.seq, ID: r.id, Time: time.Unix(0, r.tns).UTC(), Agent: r.agent, Kind: session.Kind(r.kind), Turn: r.turn,
		Text: r.text, ToolCallID: r.toolCallID, ToolName: r.toolName, IsError: r.isError, Summarizes: r.summarizes}
	for _, col := range []struct {
		name string
		text sql.NullString
		dst  any
	}{{"tool_calls", r.calls, &e.ToolCalls}, {"state_delta", r.delta, &e.StateDelta}, {"loads", r.loads, &e.Loads}} {
		if col.text.Valid {
			if err := json.Unmarshal([]byte(col.text.String), col.dst); err != nil {
				return session.Event{}, fmt.Errorf("event %d: corrupt %s column: %w", r.seq, col.name, err)
			}
		}
	}
	return e, nil
}

// readHead runs head (qHead, bound to a transaction or not) for the events
// after seq after.
func readHead(ctx context.Context, head *sql.Stmt, id string, after int64) (created, last int64, evs []session.Event, err error) {
	rows, err := head.QueryContext(ctx, id, after)
	if err != nil {
		return 0, 0, nil, err
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var r eventRow
		if err := rows.Scan(&created, &last, &r.seq, &r.id, &r.tns, &r.agent, &r.kind, &r.turn, &r.text, &r.calls,
			&r.toolCallID, &r.toolName, &r.isError, &r.delta, &r.loads, &r.summarizes); err != nil {
			return 0, 0, nil, err
		}
		found = true
		if r.seq == 0 { // the LEFT JOIN's row for a session with nothing new
			continue
		}
		e, err := r.event()
		if err != nil {
			return 0, 0, nil, err
		}
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, nil, err
	}
	if !found {
		return 0, 0, nil, driver.NotFound(id)
	}
	return created, last, evs, nil
}

// catchUp brings base forward to the file's present with one query. ok is
// false when base cannot be brought forward (the session was deleted and
// created again, or the rows are not the ones the seqs promise) and the
// caller must load the session whole.
func catchUp(ctx context.Context, head *sql.Stmt, id string, base *snapshot) (p *snapshot, ok bool, err error) {
	created, last, evs, err := readHead(ctx, head, id, base.lastSeq)
	if err != nil {
		return nil, false, err
	}
	// A count short of what the seqs promise (negative when base is
	// ahead of the file) means base is not a prefix of this session.
	if created != base.created || int64(len(evs)) != last-base.lastSeq {
		return nil, false, nil
	}
	p = base
	for i, e := range evs {
		if e.Seq != base.lastSeq+int64(i)+1 || lossy(e.StateDelta) {
			return nil, false, nil
		}
		p = p.extend(e, e.StateDelta)
	}
	return p, true, nil
}

// lossy reports whether delta may differ from what its event wrote to the
// state table: JSON replaces bytes that are not UTF-8 with U+FFFD, the
// state table keeps them, so such a delta cannot be folded.
func lossy(delta map[string]*string) bool {
	for k, v := range delta {
		if strings.ContainsRune(k, utf8.RuneError) || v != nil && strings.ContainsRune(*v, utf8.RuneError) {
			return true
		}
	}
	return false
}

// load reads session id whole; bind puts each statement in the caller's
// transaction, which keeps the three reads one snapshot.
func load(ctx context.Context, bind func(*sql.Stmt) *sql.Stmt, st *readStmts, id string) (*snapshot, error) {
	created, last, evs, err := readHead(ctx, bind(st.head), id, 0)
	if err != nil {
		return nil, err
	}
	if evs == nil {
		evs = []session.Event{}
	}
	p := &snapshot{created: created, lastSeq: last, events: evs}
	var meta string
	if err := bind(st.meta).QueryRowContext(ctx, id).Scan(&meta); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(meta), &p.meta); err != nil {
		return nil, fmt.Errorf("corrupt meta column: %w", err)
	}
	if p.state, err = readState(ctx, bind(st.state), id); err != nil {
		return nil, err
	}
	return p, nil
}

// readState runs state (qState, bound to a transaction or not).
func readState(ctx context.Context, state *sql.Stmt, id string) (map[string]string, error) {
	rows, err := state.QueryContext(ctx, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// minTime and maxTime bound what fits in int64 Unix nanoseconds.
var (
	minTime = time.Unix(0, -1<<63).UTC()
	maxTime = time.Unix(0, 1<<63-1).UTC()
)

// insertEvent gives e the Seq and Turn after pos, inserts it and applies
// its delta, all inside tx, and moves pos on; the caller records pos in
// the session row (qAdvance) before committing. It returns the event as a
// read of the file gives it back, for the cache.
func insertEvent(ctx context.Context, tx *sql.Tx, st *writeStmts, id string, e *session.Event, pos *position) (session.Event, error) {
	if err := ctx.Err(); err != nil {
		return session.Event{}, err
	}
	if e.Time.Before(minTime) || e.Time.After(maxTime) {
		return session.Event{}, fmt.Errorf("%w: event.Time %v is outside what the store keeps (%d..%d); pass a time in that range or leave it zero",
			session.ErrInvalidEvent, e.Time, minTime.Year(), maxTime.Year())
	}
	e.Seq, e.Turn = pos.lastSeq+1, pos.lastTurn
	if e.Kind.StartsTurn() {
		e.Turn++
	}
	r := eventRow{seq: e.Seq, tns: e.Time.UnixNano(), summarizes: e.Summarizes, id: e.ID, agent: e.Agent, kind: string(e.Kind), text: e.Text,
		toolCallID: e.ToolCallID, toolName: e.ToolName, turn: e.Turn, isError: e.IsError}
	for _, col := range []struct {
		dst   *sql.NullString
		empty bool
		v     any
	}{{&r.calls, len(e.ToolCalls) == 0, e.ToolCalls}, {&r.delta, len(e.StateDelta) == 0, e.StateDelta}, {&r.loads, len(e.Loads) == 0, e.Loads}} {
		if col.empty { // NULL, not "null" or "[]": nothing to encode or decode
			continue
		}
		b, err := json.Marshal(col.v)
		if err != nil {
			return session.Event{}, err
		}
		*col.dst = sql.NullString{String: string(b), Valid: true}
	}
	if _, err := tx.StmtContext(ctx, st.insert).ExecContext(ctx, id, r.seq, r.id, r.tns, r.agent, r.kind, r.turn, r.text, r.calls,
		r.toolCallID, r.toolName, r.isError, r.delta, r.loads, r.summarizes); err != nil {
		return session.Event{}, err
	}
	for _, k := range slices.Sorted(maps.Keys(e.StateDelta)) {
		var err error
		if v := e.StateDelta[k]; v == nil {
			_, err = tx.StmtContext(ctx, st.delKey).ExecContext(ctx, id, k)
		} else {
			_, err = tx.StmtContext(ctx, st.setKey).ExecContext(ctx, id, k, *v)
		}
		if err != nil {
			return session.Event{}, fmt.Errorf("apply state key %q: %w", k, err)
		}
	}
	pos.lastSeq, pos.lastTurn = e.Seq, e.Turn
	return readBack(e, &r)
}

// readBack returns e as a read of its row r gives it back. Decoding the
// JSON just encoded is exact but costs what the cache saves; a copy is
// the same when every string JSON carries is UTF-8 (JSON replaces other
// bytes) and empty lists are nil (stored as NULL, or dropped by
// omitempty; a hook may have emptied them after Prepare).
func readBack(e *session.Event, r *eventRow) (session.Event, error) {
	valid := utf8.ValidString
	for _, c := range e.ToolCalls {
		if !valid(c.ID) || !valid(c.Name) || !valid(c.Arguments) {
			return r.event()
		}
	}
	for k, v := range e.StateDelta {
		if !valid(k) || v != nil && !valid(*v) {
			return r.event()
		}
	}
	for _, l := range e.Loads {
		if !valid(l.Skill) || !valid(l.Lifetime) || slices.ContainsFunc(l.Docs, func(d string) bool { return !valid(d) }) {
			return r.event()
		}
	}
	c := e.Clone()
	c.Time = time.Unix(0, r.tns).UTC()
	c.ToolCalls, c.Loads = nilIfEmpty(c.ToolCalls), nilIfEmpty(c.Loads)
	if len(c.StateDelta) == 0 {
		c.StateDelta = nil
	}
	for i := range c.Loads {
		c.Loads[i].Docs = nilIfEmpty(c.Loads[i].Docs)
	}
	return c, nil
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// advance records pos as the session's newest Seq and Turn.
func advance(ctx context.Context, tx *sql.Tx, st *writeStmts, id string, pos position) error {
	_, err := tx.StmtContext(ctx, st.advance).ExecContext(ctx, pos.lastSeq, pos.lastTurn, id)
	return err
}
