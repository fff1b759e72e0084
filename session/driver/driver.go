// Package driver holds what an implementation of session.Store needs and
// applications never call: preparing an event, running the append hook,
// checking IDs and metadata, and the not-found error, each with the exact
// semantics the memory store has. A Store built on them and passing
// session/sessiontest behaves like every other.
package driver

import (
	"context"
	"time"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/internal/storecore"
)

// Prepare is the first step of every Append: it copies ev, validates it,
// gives it an ID and a Time when they are empty (now is the store's
// clock), normalises Time to UTC without a monotonic reading, zeroes Seq
// and Turn for the store to assign, and turns an empty StateDelta,
// ToolCalls or Loads into nil.
func Prepare(ev session.Event, now time.Time) (session.Event, error) {
	e := ev.Clone()
	if err := e.Validate(); err != nil {
		return session.Event{}, err
	}
	storecore.Defaults(&e.ID, &e.Time, now, session.NewID)
	e.Seq, e.Turn = 0, 0
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

// RunHook gives every Store the same hook semantics. With a nil hook it
// calls commit(ev) directly. Otherwise it calls hook with a next that
// re-validates ev (the hook may have changed it) and calls commit once.
// The caller persists only if RunHook returns nil; on error it must roll
// back whatever commit did. A hook that returns nil without calling next
// yields session.ErrDropped.
func RunHook(ctx context.Context, hook session.AppendHook, sess *session.Session, ev *session.Event, commit func(*session.Event) error) error {
	return storecore.RunHook(ctx, hook, sess, ev, (*session.Event).Validate, commit, session.ErrDropped)
}

// CheckID reports whether id is a usable session ID: non-empty, at most
// session.MaxIDLength bytes, no control characters. Failures wrap
// session.ErrInvalidArgument.
func CheckID(id string) error {
	return storecore.CheckID(id, session.MaxIDLength, session.ErrInvalidArgument)
}

// CheckMeta reports whether meta is usable as session metadata: every key
// non-empty. Failures wrap session.ErrInvalidArgument.
func CheckMeta(meta map[string]string) error {
	return storecore.CheckMeta(meta, session.ErrInvalidArgument)
}

// NotFound returns session.ErrNotFound wrapped with the session ID, in the
// form every Store uses.
func NotFound(id string) error { return storecore.NotFound(id, session.ErrNotFound) }
