package workspace

import (
	"errors"
	"fmt"
	"io"
)

// ErrRemoved is returned by Attach on a Workspace whose workspace was
// removed after it was opened: open it again.
var ErrRemoved = errors.New("workspace: removed")

// Attach ties something that runs in the workspace beyond one command —
// a background command — to the workspace's life: c.Close is called, once,
// before the workspace is removed (Remove, Sweep, Discard) and when the
// Manager closes, so that nothing keeps running in files that are gone
// (or keeps a volume busy). Sweep leaves a workspace alone while anything
// is attached, as it does a locked one. detach forgets c, for when it
// ended by itself; calling it more than once, or after c was closed, does
// nothing.
//
// Call Attach while holding Lock, as the command that started c did: a
// Remove waiting for the lock then finds c attached. A Workspace whose
// workspace was removed since it was opened refuses with ErrRemoved.
func (w *Workspace) Attach(c io.Closer) (detach func(), err error) {
	if c == nil {
		return nil, fmt.Errorf("workspace %s: attach: nil closer", w.id)
	}
	return w.st.attach(w.id, c)
}

// attach records c; see Attach.
func (st *state) attach(id string, c io.Closer) (func(), error) {
	st.attachMu.Lock()
	defer st.attachMu.Unlock()
	if st.removed {
		return nil, fmt.Errorf("%w: workspace %s was removed after it was opened; open it again", ErrRemoved, id)
	}
	if st.attached == nil {
		st.attached = make(map[*attachment]io.Closer)
	}
	a := &attachment{}
	st.attached[a] = c
	return func() {
		st.attachMu.Lock()
		delete(st.attached, a)
		st.attachMu.Unlock()
	}, nil
}

// attachment is the identity of one Attach.
type attachment struct{ _ byte }

// hasAttached reports whether anything is attached.
func (st *state) hasAttached() bool {
	st.attachMu.Lock()
	defer st.attachMu.Unlock()
	return len(st.attached) > 0
}

// closeAttached closes and forgets everything attached, outside the lock
// (a closer may detach itself).
func (st *state) closeAttached(id string) error {
	st.attachMu.Lock()
	closers := st.attached
	st.attached = nil
	st.attachMu.Unlock()
	var errs []error
	for _, c := range closers {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("workspace %s: close what is attached: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// markRemoved makes later Attach calls on st fail.
func (st *state) markRemoved() {
	st.attachMu.Lock()
	st.removed = true
	st.attachMu.Unlock()
}

// closeAllAttached closes what is attached to every workspace of m.
func (m *Manager) closeAllAttached() error {
	m.mu.Lock()
	states := make(map[string]*state, len(m.states))
	for id, st := range m.states {
		states[id] = st
	}
	m.mu.Unlock()
	var errs []error
	for id, st := range states {
		errs = append(errs, st.closeAttached(id))
	}
	return errors.Join(errs...)
}
