package session

import (
	"context"
	"errors"
	"time"

	"github.com/skillkit/skillkit/session/internal/storecore"
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

// Viewer is a Store that can show a session without copying it, for
// readers that only look (building a model request reads every event).
// View calls fn with the session as stored, while no append to it can
// run; fn must not change the session, keep it after returning, or call
// the store. A missing session is ErrNotFound, and fn's error is View's.
type Viewer interface {
	View(ctx context.Context, id string, fn func(*Session) error) error
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

// prepareEvent is the first step of an Append: see driver.Prepare.
func prepareEvent(ev Event, now time.Time) (Event, error) {
	e := ev.Clone()
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	storecore.Defaults(&e.ID, &e.Time, now, NewID)
	e.Seq, e.Turn = 0, 0
	// Empty and nil are the same to every store; keep one form so
	// snapshots compare equal whichever store produced them.
	if len(e.StateDelta) == 0 {
		e.StateDelta = nil
	}
	if len(e.ToolCalls) == 0 {
		e.ToolCalls = nil
	}
	if len(e.Loads) == 0 {
		e.Loads = nil
	}
	return e, nil
}

// runAppendHook runs hook around commit: see driver.RunHook.
func runAppendHook(ctx context.Context, hook AppendHook, sess *Session, ev *Event, commit func(*Event) error) error {
	return storecore.RunHook(ctx, hook, sess, ev, (*Event).Validate, commit, ErrDropped)
}

// notFound is ErrNotFound wrapped with the session ID.
func notFound(id string) error { return storecore.NotFound(id, ErrNotFound) }
