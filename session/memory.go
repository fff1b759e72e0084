package session

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/skillkit/skillkit/session/internal/storecore"
)

// MemoryStore keeps sessions in process memory. Appends to different sessions
// run in parallel; appends to one session are serialized. Nothing survives
// the process: use sqlitestore for durability.
type MemoryStore struct {
	hook AppendHook
	now  func() time.Time

	mu       sync.RWMutex
	sessions map[string]*memSession
	closed   bool
}

// memSession is one session with its own lock, so a slow hook on one session
// does not stall the others.
type memSession struct {
	mu      sync.Mutex
	deleted bool
	s       Session
}

// NewMemoryStore returns an empty in-memory store. opts may be nil.
func NewMemoryStore(opts *Options) *MemoryStore {
	m := &MemoryStore{now: time.Now, sessions: make(map[string]*memSession)}
	if opts != nil {
		m.hook = opts.AppendHook
	}
	return m
}

// Create implements Store.
func (m *MemoryStore) Create(ctx context.Context, id string, meta map[string]string) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if id == "" {
		id = NewID()
	}
	if err := storecore.CheckID(id, MaxIDLength, ErrInvalidArgument); err != nil {
		return nil, err
	}
	if err := storecore.CheckMeta(meta, ErrInvalidArgument); err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	ms := &memSession{s: Session{
		ID:      id,
		Created: m.now().UTC().Round(0),
		Meta:    cloneMeta(meta),
		State:   map[string]string{},
	}}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if _, ok := m.sessions[id]; ok {
		return nil, fmt.Errorf("session %q: %w; pick another ID or leave it empty", id, ErrExists)
	}
	m.sessions[id] = ms
	return ms.s.Clone(), nil
}

// Get implements Store.
func (m *MemoryStore) Get(ctx context.Context, id string) (*Session, error) {
	ms, err := m.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.deleted {
		return nil, notFound(id)
	}
	return ms.s.Clone(), nil
}

// View implements Viewer: fn sees the session under its lock, uncopied.
func (m *MemoryStore) View(ctx context.Context, id string, fn func(*Session) error) error {
	ms, err := m.lookup(ctx, id)
	if err != nil {
		return err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.deleted {
		return notFound(id)
	}
	return fn(&ms.s)
}

// State implements Store.
func (m *MemoryStore) State(ctx context.Context, id string) (map[string]string, int64, error) {
	ms, err := m.lookup(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.deleted {
		return nil, 0, notFound(id)
	}
	return maps.Clone(ms.s.State), ms.s.LastSeq(), nil
}

// Append implements Store.
func (m *MemoryStore) Append(ctx context.Context, id string, ev Event) (Event, error) {
	e, err := prepareEvent(ev, m.now())
	if err != nil {
		return Event{}, fmt.Errorf("session %q: append: %w", id, err)
	}
	ms, err := m.lookup(ctx, id)
	if err != nil {
		return Event{}, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.deleted {
		return Event{}, notFound(id)
	}
	var snap *Session
	if m.hook != nil {
		snap = ms.s.Clone()
	}
	// commit only stages the event: the hook may still veto after next.
	var staged Event
	commit := func(e *Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		staged = e.Clone()
		staged.Seq = ms.s.LastSeq() + 1
		staged.Turn = ms.s.Turn()
		if staged.Kind.StartsTurn() {
			staged.Turn++
		}
		*e = staged.Clone()
		return nil
	}
	if err := runAppendHook(ctx, m.hook, snap, &e, commit); err != nil {
		return Event{}, fmt.Errorf("session %q: append: %w", id, err)
	}
	ms.s.Events = append(ms.s.Events, staged)
	ApplyDelta(ms.s.State, staged.StateDelta)
	return staged.Clone(), nil
}

// AppendFunc implements Store.
func (m *MemoryStore) AppendFunc(ctx context.Context, id string, build BuildFunc) ([]Event, error) {
	ms, err := m.lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.deleted {
		return nil, notFound(id)
	}
	evs, err := build(maps.Clone(ms.s.State), ms.s.LastSeq())
	if err != nil {
		return nil, fmt.Errorf("session %q: append: %w", id, err)
	}
	// Events are staged on a working copy of the parts they change and
	// installed only when every one was accepted.
	events := ms.s.Events
	state := ms.s.State
	staged := make([]Event, 0, len(evs))
	cloned := false
	for i, ev := range evs {
		e, err := prepareEvent(ev, m.now())
		if err != nil {
			return nil, fmt.Errorf("session %q: append event %d of %d: %w", id, i+1, len(evs), err)
		}
		var snap *Session
		if m.hook != nil {
			snap = &Session{ID: ms.s.ID, Created: ms.s.Created, Meta: ms.s.Meta, Events: events, State: state}
			snap = snap.Clone()
		}
		var out Event
		commit := func(e *Event) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			// e is this store's own copy (prepareEvent cloned the input),
			// so it can be kept as it is; callers get clones below.
			turn := ms.s.Turn()
			if len(staged) > 0 {
				turn = staged[len(staged)-1].Turn
			}
			e.Seq, e.Turn = ms.s.LastSeq()+int64(len(staged))+1, turn
			if e.Kind.StartsTurn() {
				e.Turn++
			}
			out = *e
			if m.hook != nil {
				// A hook still holds e after next returns; keep a copy it
				// cannot reach.
				out = e.Clone()
			}
			return nil
		}
		if err := runAppendHook(ctx, m.hook, snap, &e, commit); err != nil {
			return nil, fmt.Errorf("session %q: append event %d of %d: %w", id, i+1, len(evs), err)
		}
		staged = append(staged, out)
		if m.hook != nil {
			// Later hooks in the batch see the earlier events.
			if !cloned {
				state, cloned = maps.Clone(state), true
			}
			events = append(slices.Clip(events), out)
			ApplyDelta(state, out.StateDelta)
		}
	}
	for _, e := range staged {
		ms.s.Events = append(ms.s.Events, e)
		ApplyDelta(ms.s.State, e.StateDelta)
	}
	out := make([]Event, len(staged))
	for i, e := range staged {
		out[i] = e.Clone()
	}
	return out, nil
}

// List implements Store.
func (m *MemoryStore) List(ctx context.Context) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return nil, ErrClosed
	}
	all := make([]*memSession, 0, len(m.sessions))
	for _, ms := range m.sessions {
		all = append(all, ms)
	}
	m.mu.RUnlock()
	out := make([]Info, 0, len(all))
	for _, ms := range all {
		ms.mu.Lock()
		if !ms.deleted {
			out = append(out, Info{ID: ms.s.ID, Created: ms.s.Created, Meta: cloneMeta(ms.s.Meta), LastSeq: ms.s.LastSeq()})
		}
		ms.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	ms, ok := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if !ok {
		return notFound(id)
	}
	// An Append holding ms.mu finishes first; later ones see deleted.
	ms.mu.Lock()
	ms.deleted = true
	ms.mu.Unlock()
	return nil
}

// Close implements Store. It drops every session.
func (m *MemoryStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.sessions = nil
	return nil
}

func (m *MemoryStore) lookup(ctx context.Context, id string) (*memSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	ms, ok := m.sessions[id]
	if !ok {
		return nil, notFound(id)
	}
	return ms, nil
}
