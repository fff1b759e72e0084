// Package storecore holds the steps every session Store shares, written
// once for the memory store and for the exported helpers of
// session/driver. It knows no session type: the callers pass theirs.
package storecore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode"
)

// CheckID reports whether id is a usable session ID: non-empty, at most
// max bytes, printable UTF-8. Failures wrap invalid.
func CheckID(id string, max int, invalid error) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: session ID is empty", invalid)
	case len(id) > max:
		return fmt.Errorf("%w: session ID is %d bytes; the limit is %d", invalid, len(id), max)
	}
	for _, r := range id {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%w: session ID %q has a control or invalid character; use printable UTF-8", invalid, id)
		}
	}
	return nil
}

// CheckMeta reports whether meta is usable as session metadata: every key
// non-empty. Failures wrap invalid.
func CheckMeta(meta map[string]string, invalid error) error {
	for k := range meta {
		if k == "" {
			return fmt.Errorf("%w: session meta has an empty key; metadata keys must be non-empty", invalid)
		}
	}
	return nil
}

// NotFound wraps notFound with the session ID.
func NotFound(id string, notFound error) error {
	return fmt.Errorf("session %q: %w; check the ID, or create the session first", id, notFound)
}

// Defaults gives an event a random ID when it has none and the time now
// when it has none, in UTC without a monotonic reading.
func Defaults(id *string, t *time.Time, now time.Time, newID func() string) {
	if *id == "" {
		*id = newID()
	}
	if t.IsZero() {
		*t = now
	}
	*t = t.UTC().Round(0)
}

// RunHook calls hook with a next that re-validates ev (the hook may have
// changed it) and calls commit once; with a nil hook it calls commit
// directly. The caller persists only if RunHook returns nil; on error it
// must roll back whatever commit did. A hook that returns nil without
// calling next drops the event: the error is dropped.
func RunHook[S, E any](ctx context.Context, hook func(context.Context, *S, *E, func() error) error, sess *S, ev *E,
	validate func(*E) error, commit func(*E) error, dropped error) error {
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
		if err := validate(ev); err != nil {
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
		return dropped
	}
	return nil
}
