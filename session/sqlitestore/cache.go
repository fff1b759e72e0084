package sqlitestore

import (
	"container/list"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillkit/skillkit/session"
)

// DefaultCacheSessions is how many sessions a Store keeps in memory when
// Options.CacheSessions is zero.
const DefaultCacheSessions = 64

// snapshot is one session as committed when its last_seq was lastSeq. It
// never changes once built, so it is shared without locks; callers get
// deep copies (see session).
type snapshot struct {
	created int64 // created_ns: tells a session from one deleted and created again under its ID
	lastSeq int64
	meta    map[string]string
	events  []session.Event
	state   map[string]string
	// grown is claimed by the first extension, which may append into the
	// spare capacity of events; later ones copy, so no two extensions
	// write the same slots of one array.
	grown atomic.Bool
}

// extend returns p followed by ev. delta is ev's change as the state
// table got it: for bytes that are not UTF-8 that differs from
// ev.StateDelta, which went through JSON.
func (p *snapshot) extend(ev session.Event, delta map[string]*string) *snapshot {
	var events []session.Event
	if p.grown.CompareAndSwap(false, true) {
		events = append(p.events, ev)
	} else {
		events = append(slices.Clip(p.events), ev)
	}
	state := p.state
	if len(delta) > 0 {
		state = maps.Clone(p.state)
		session.ApplyDelta(state, delta)
	}
	return &snapshot{created: p.created, lastSeq: ev.Seq, meta: p.meta, events: events, state: state}
}

// session returns a deep copy of p for a caller to own.
func (p *snapshot) session(id string) *session.Session {
	evs := make([]session.Event, len(p.events))
	for i := range p.events {
		evs[i] = p.events[i].Clone()
	}
	return &session.Session{ID: id, Created: time.Unix(0, p.created).UTC(), Meta: maps.Clone(p.meta), State: maps.Clone(p.state), Events: evs}
}

// cache keeps the snapshots of the most recently used sessions, so a read
// costs a validating query plus the events added since. A nil *cache is a
// disabled one: get finds nothing, put and drop do nothing.
//
// Nothing is served from it unchecked: every use compares the entry with
// the file first (see Store.snapshot), so an entry that another process
// made stale costs a reload, never a wrong answer.
type cache struct {
	max  int
	mu   sync.Mutex
	byID map[string]*list.Element // values are *cacheEntry
	lru  list.List                // front: most recently used
}

type cacheEntry struct {
	id   string
	snap *snapshot
}

// newCache returns a cache of up to max sessions, or nil (disabled) when
// max is negative; zero means DefaultCacheSessions.
func newCache(max int) *cache {
	switch {
	case max < 0:
		return nil
	case max == 0:
		max = DefaultCacheSessions
	}
	return &cache{max: max, byID: make(map[string]*list.Element, max)}
}

// get returns the entry for id, nil when there is none, and marks it used.
func (c *cache) get(id string) *snapshot {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cacheEntry).snap
}

// put makes p the entry for id, evicting the least recently used entry
// beyond the bound. An entry further along the same session is kept:
// callers racing to put need not agree on who is newest.
func (c *cache) put(id string, p *snapshot) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		if e.snap.created != p.created || e.snap.lastSeq <= p.lastSeq {
			e.snap = p
		}
		return
	}
	c.byID[id] = c.lru.PushFront(&cacheEntry{id: id, snap: p})
	for c.lru.Len() > c.max {
		c.remove(c.lru.Back())
	}
}

// drop forgets id.
func (c *cache) drop(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.remove(el)
	}
}

// remove takes el out of the cache; c.mu is held.
func (c *cache) remove(el *list.Element) {
	c.lru.Remove(el)
	delete(c.byID, el.Value.(*cacheEntry).id)
}

// ids lists the cached sessions, most recently used first.
func (c *cache) ids() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, c.lru.Len())
	for el := c.lru.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*cacheEntry).id)
	}
	return out
}
