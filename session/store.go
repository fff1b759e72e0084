package session

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode"
)

// Errors callers branch on. Store methods wrap them with the session ID.
var (
	// ErrNotFound: no session has the given ID.
	ErrNotFound = errors.New("session not found")
	// ErrExists: Create was given an ID that is already taken.
	ErrExists = errors.New("session already exists")
	// ErrInvalidEvent: an event failed Validate.
	ErrInvalidEvent = errors.New("invalid event")
	// ErrInvalidArgument: a session ID or metadata key is unusable.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrDropped: the AppendHook returned nil without calling next, so
	// nothing was appended.
	ErrDropped = errors.New("append hook dropped the event")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("session store closed")
)

// MaxIDLength is the longest session ID a Store accepts, in bytes.
const MaxIDLength = 256

// Store keeps sessions. Implementations are safe for concurrent use by many
// goroutines on many sessions; appends to one session are serialized, so
// Seq is strictly increasing without gaps.
type Store interface {
	// Create makes a session with the given metadata. An empty id gets a
	// random one (NewID); a taken id is ErrExists. It returns the new
	// session's snapshot.
	Create(ctx context.Context, id string, meta map[string]string) (*Session, error)
	// Get returns a snapshot (metadata, events, state) that the caller
	// owns. A missing session is ErrNotFound.
	Get(ctx context.Context, id string) (*Session, error)
	// State returns a copy of the session's state and the Seq of its
	// newest event (0 when it has none), without reading the events: the
	// cheap read a tool call needs. A missing session is ErrNotFound.
	State(ctx context.Context, id string) (state map[string]string, lastSeq int64, err error)
	// Append validates ev, assigns Seq and Turn (and ID and Time when
	// empty), runs the AppendHook, and persists the event together with
	// its StateDelta in one atomic step. It returns the event as stored.
	// When Append returns nil the event is durable to the store's promise.
	Append(ctx context.Context, id string, ev Event) (Event, error)
	// AppendFunc appends, atomically and all or none, the events build
	// returns. build sees the session's state and newest Seq as they are
	// at that moment and runs while the session is locked against other
	// appends, so a change computed from the state cannot be lost to a
	// concurrent writer. It must be quick and must not call the store.
	// Each event goes through the AppendHook as with Append.
	AppendFunc(ctx context.Context, id string, build BuildFunc) ([]Event, error)
	// List describes every session, oldest first (ties by ID).
	List(ctx context.Context) ([]Info, error)
	// Delete removes a session with its events and state. A missing
	// session is ErrNotFound.
	Delete(ctx context.Context, id string) error
	// Close releases the store's resources; later calls return ErrClosed.
	Close() error
}

// BuildFunc computes events from a session's current state (a copy the
// function may change) and the Seq of its newest event. See
// Store.AppendFunc.
type BuildFunc func(state map[string]string, lastSeq int64) ([]Event, error)

// AppendHook runs inside Store.Append, after validation and before the event
// is persisted, while the session is locked against other appends. sess is
// a snapshot of the session before the append (the hook may read it freely;
// changes to it are ignored). The hook may rewrite ev — typically its
// StateDelta — and must call next to persist it; next returns the store's
// error. Returning an error vetoes the event: nothing is appended, even if
// next already ran. Returning nil without calling next drops the event and
// Append returns ErrDropped.
//
// A hook must not call the Store it is installed on: the session is locked.
type AppendHook func(ctx context.Context, sess *Session, ev *Event, next func() error) error

// Options configures a Store. The zero value (or nil) means defaults.
type Options struct {
	// AppendHook, if set, runs around every append. Compose several with
	// ChainAppendHooks.
	AppendHook AppendHook
}

// ChainAppendHooks composes hooks so that the first is outermost: it runs
// first and its next runs the second, and so on. Nil hooks are skipped.
func ChainAppendHooks(hooks ...AppendHook) AppendHook {
	var live []AppendHook
	for _, h := range hooks {
		if h != nil {
			live = append(live, h)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return func(ctx context.Context, sess *Session, ev *Event, next func() error) error {
		var call func(i int) error
		call = func(i int) error {
			if i == len(live) {
				return next()
			}
			return live[i](ctx, sess, ev, func() error { return call(i + 1) })
		}
		return call(0)
	}
}

// RunAppendHook gives every Store implementation the same hook semantics.
// With a nil hook it calls commit(ev) directly. Otherwise it calls hook with a
// next that re-validates ev (the hook may have changed it) and calls commit
// once. The caller persists only if RunAppendHook returns nil; on error it
// must roll back whatever commit did.
func RunAppendHook(ctx context.Context, hook AppendHook, sess *Session, ev *Event, commit func(*Event) error) error {
	if hook == nil {
		return commit(ev)
	}
	called := false
	var commitErr error
	next := func() error {
		if called {
			return errors.New("append hook called next twice; call it once")
		}
		called = true
		if err := ev.Validate(); err != nil {
			commitErr = fmt.Errorf("after append hook: %w", err)
			return commitErr
		}
		commitErr = commit(ev)
		return commitErr
	}
	err := hook(ctx, sess, ev, next)
	switch {
	case err != nil && commitErr != nil && errors.Is(err, commitErr):
		return err
	case err != nil:
		return fmt.Errorf("append hook rejected the event: %w", err)
	case !called:
		return ErrDropped
	}
	return nil
}

// PrepareEvent is the first step of every Store's Append: it copies ev,
// validates it, assigns an ID and Time when empty, normalizes Time to UTC
// without a monotonic reading, and zeroes Seq and Turn for the store to
// assign, and turns an empty StateDelta or ToolCalls into nil. now is the
// store's clock.
func PrepareEvent(ev Event, now time.Time) (Event, error) {
	e := ev.Clone()
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	if e.Time.IsZero() {
		e.Time = now
	}
	e.Time = e.Time.UTC().Round(0)
	e.Seq, e.Turn = 0, 0
	// Empty and nil are the same to every store; keep one form so
	// snapshots compare equal whichever store produced them.
	if len(e.StateDelta) == 0 {
		e.StateDelta = nil
	}
	if len(e.ToolCalls) == 0 {
		e.ToolCalls = nil
	}
	return e, nil
}

// CheckID reports whether id is a usable session ID: non-empty, at most
// MaxIDLength bytes, no control characters.
func CheckID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: session ID is empty", ErrInvalidArgument)
	case len(id) > MaxIDLength:
		return fmt.Errorf("%w: session ID is %d bytes; the limit is %d", ErrInvalidArgument, len(id), MaxIDLength)
	}
	for _, r := range id {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%w: session ID %q has a control or invalid character; use printable UTF-8", ErrInvalidArgument, id)
		}
	}
	return nil
}

// CheckMeta reports whether meta is usable as session metadata: every key
// non-empty.
func CheckMeta(meta map[string]string) error {
	for k := range meta {
		if k == "" {
			return fmt.Errorf("%w: session meta has an empty key; metadata keys must be non-empty", ErrInvalidArgument)
		}
	}
	return nil
}

// NotFound returns ErrNotFound wrapped with the session ID, in the form every
// Store uses.
func NotFound(id string) error {
	return fmt.Errorf("session %q: %w; check the ID (list sessions with `skillkit session ls`, create one with `skillkit session new` or Store.Create)", id, ErrNotFound)
}
