// Package redisstore keeps sessions in Redis (through
// github.com/redis/go-redis/v9), so several processes and machines can
// share them.
//
// Every change is one Lua script, which Redis runs alone: an Append
// assigns the Seq and Turn, stores the event and applies its StateDelta in
// one atomic step. Appends of one process to one session take turns on a
// lock of that session; AppendFunc (and Append under an AppendHook, which
// sees the session before the event) read the session, build the events
// and then write them only if the session is still where it was read —
// otherwise they read it again and build anew, up to Options.MaxAttempts
// times (ErrContention), so a change computed from the state is never
// lost to a writer in another process. Each write carries a random token
// the session remembers for its last 64 writes: a command the client
// resends after losing the reply is stored once.
//
// A call returns as soon as its context ends, even while Redis has not
// answered; an append in flight then may or may not be stored.
//
// Durability is the server's: Append returns once Redis has run the
// script. With "appendonly yes" and "appendfsync always" the event is on
// disk by then and survives a crash of the server; with Redis's default
// snapshots, writes since the last snapshot are lost with the server.
//
// Keys (P is Options.Prefix, "skillkit:" by default, so several
// applications can share one Redis; no prefix may be the start of
// another; ID is the session ID):
//
//	P sessions        sorted set: every session ID, scored by creation (Unix ms)
//	P s:{ID}          hash: created (Unix ns), meta (JSON object), seq, turn,
//	                  creator (the token of the Create that made it)
//	P e:{ID}          list: the events in Seq order, each a JSON object
//	                  {"seq", "turn", "id", "time", "agent", "kind", "text",
//	                  "tool_calls", "tool_call_id", "tool_name", "is_error",
//	                  "state_delta" (null deletes), "loads", "summarizes"}
//	P st:{ID}         hash: the state
//	P a:{ID}          list: "token first-seq turn..." of the newest writes
//
// With Options.IdleTTL the four keys of a session expire together once it
// has been neither read nor written for that long (List does not count as
// a read); expired sessions leave the index when List next meets them.
// The braces make the keys of one session one hash slot, but Create and
// Delete also change the index, so Redis Cluster is not supported.
//
//	st, err := redisstore.Open(ctx, &redisstore.Options{Addr: "127.0.0.1:6379", Prefix: "myapp:"})
//	if err != nil { ... }
//	defer st.Close()
//	s, _ := st.Create(ctx, "", nil)
//	_, _ = st.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Text: "hi"})
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/driver"
)

// Defaults of Options.
const (
	// DefaultAddr is the server Open connects to when Options.Addr and
	// Options.Client are empty.
	DefaultAddr = "127.0.0.1:6379"
	// DefaultPrefix starts every key when Options.Prefix is empty.
	DefaultPrefix = "skillkit:"
	// DefaultMaxAttempts bounds the tries of an optimistic write when
	// Options.MaxAttempts is zero.
	DefaultMaxAttempts = 16
	// MinIdleTTL is the shortest Options.IdleTTL: Redis expires keys in
	// whole milliseconds.
	MinIdleTTL = time.Millisecond
)

// ErrContention: an AppendFunc, or an Append under a hook, found the
// session changed by another writer (another process) each of the
// Options.MaxAttempts times it tried, and gave up. Nothing was appended.
var ErrContention = errors.New("session kept changing under other writers")

// errConflict is one failed try of an optimistic write.
var errConflict = errors.New("session changed since it was read")

// Options configures a Store. Nil or the zero value means defaults.
type Options struct {
	// AppendHook runs around every append (see session.AppendHook). With
	// a hook set, every append reads the whole session to hand the hook
	// its copy, and may run the hook again when another process wrote to
	// the session in between.
	AppendHook session.AppendHook
	// Addr is the server's host:port; empty means DefaultAddr. Set Client
	// instead for a password, TLS, Sentinel or other client settings.
	Addr string
	// Client, if set, is the connection to use (Addr must then be empty).
	// The Store does not close it. Calls return when their context ends
	// whatever the client's settings; with ContextTimeoutEnabled the
	// client also gives up the connection then.
	Client *redis.Client
	// Prefix starts every key of the store; empty means DefaultPrefix.
	Prefix string
	// IdleTTL, if positive, makes a session expire (its events, state and
	// all) once it has been neither read nor written for this long; at
	// least MinIdleTTL. Zero keeps sessions until Delete, and a write
	// removes an expiry an earlier configuration set.
	IdleTTL time.Duration
	// MaxAttempts bounds the tries of an AppendFunc, or an Append under a
	// hook, that finds the session changed by another process between
	// reading and writing it (ErrContention). Zero means
	// DefaultMaxAttempts; negative is invalid.
	MaxAttempts int
}

// Store is a session.Store kept in Redis. It is safe for concurrent use,
// and any number of processes may share the server and prefix.
type Store struct {
	client      *redis.Client
	ownClient   bool
	addr        string
	prefix      string
	hook        session.AppendHook
	ttlMS       int64
	maxAttempts int
	locks       sessionLocks
	closed      atomic.Bool
}

var _ session.Store = (*Store)(nil)

// Open connects to Redis and checks that it answers. Errors name the
// server and say what to check.
func Open(ctx context.Context, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.IdleTTL < 0 || (o.IdleTTL > 0 && o.IdleTTL < MinIdleTTL):
		return nil, fmt.Errorf("redisstore: Options.IdleTTL is %v; use 0 to keep sessions, or at least %v", o.IdleTTL, MinIdleTTL)
	case o.MaxAttempts < 0:
		return nil, fmt.Errorf("redisstore: Options.MaxAttempts is %d; use 0 for the default (%d) or a positive count", o.MaxAttempts, DefaultMaxAttempts)
	case o.Client != nil && o.Addr != "":
		return nil, fmt.Errorf("redisstore: both Options.Addr (%q) and Options.Client are set; set one", o.Addr)
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	s := &Store{client: o.Client, prefix: o.Prefix, hook: o.AppendHook, ttlMS: o.IdleTTL.Milliseconds(), maxAttempts: o.MaxAttempts}
	if s.client == nil {
		if o.Addr == "" {
			o.Addr = DefaultAddr
		}
		if _, _, err := net.SplitHostPort(o.Addr); err != nil {
			return nil, fmt.Errorf("redisstore: Options.Addr %q is not host:port (%v); for example %q", o.Addr, err, DefaultAddr)
		}
		s.client = redis.NewClient(&redis.Options{Addr: o.Addr, ContextTimeoutEnabled: true, DisableIdentity: true})
		s.ownClient = true
	}
	s.addr = s.client.Options().Addr
	if _, err := do(ctx, func(ctx context.Context) (string, error) { return s.client.Ping(ctx).Result() }); err != nil {
		if s.ownClient {
			_ = s.client.Close()
		}
		return nil, fmt.Errorf("redisstore %s: open: %w", s.addr, s.explain(ctx, err))
	}
	return s, nil
}

// Addr returns the address of the server the store uses.
func (s *Store) Addr() string { return s.addr }

// Prefix returns the prefix of the store's keys.
func (s *Store) Prefix() string { return s.prefix }

// Close implements session.Store. A Client passed in Options stays open.
func (s *Store) Close() error {
	if s.closed.Swap(true) || !s.ownClient {
		return nil
	}
	return s.client.Close()
}

// keys are the keys of one session, in the order the scripts take them.
func (s *Store) keys(id string) []string {
	tag := "{" + id + "}"
	return []string{s.prefix + "s:" + tag, s.prefix + "e:" + tag, s.prefix + "st:" + tag, s.prefix + "a:" + tag}
}

func (s *Store) index() string { return s.prefix + "sessions" }

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
	if err := ctx.Err(); err != nil {
		return nil, s.wrap(id, "create", err)
	}
	if meta == nil {
		meta = map[string]string{}
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, s.wrap(id, "create", err)
	}
	created, token := time.Now().UTC().Round(0), session.NewID()
	n, err := do(ctx, func(ctx context.Context) (int, error) {
		return createScript.Run(ctx, s.client, append(s.keys(id), s.index()),
			id, created.UnixNano(), created.UnixMilli(), metaJSON, s.ttlMS, token).Int()
	})
	if err != nil {
		return nil, s.wrap(id, "create", s.explain(ctx, err))
	}
	if n == 0 {
		return nil, s.wrap(id, "create", fmt.Errorf("%w; pick another ID or leave it empty", session.ErrExists))
	}
	return &session.Session{ID: id, Created: created, Meta: maps.Clone(meta), Events: []session.Event{}, State: map[string]string{}}, nil
}

// snapshot is a session as one read script returned it.
type snapshot struct {
	// created and seq, as the session hash holds them, are what an
	// optimistic write expects to find unchanged.
	created, seq string
	createdNS    int64
	lastSeq      int64
	turn         int
	meta         map[string]string
	events       []session.Event // nil unless asked for
	state        map[string]string
}

// read runs readScript: the session's position and state, and its meta
// and events when events is set. It refreshes the session's expiry.
func (s *Store) read(ctx context.Context, id string, events bool) (*snapshot, error) {
	flag := "0"
	if events {
		flag = "1"
	}
	res, err := do(ctx, func(ctx context.Context) ([]any, error) {
		return readScript.Run(ctx, s.client, s.keys(id), s.ttlMS, flag).Slice()
	})
	if errors.Is(err, redis.Nil) {
		return nil, driver.NotFound(id)
	}
	if err != nil {
		return nil, s.explain(ctx, err)
	}
	p, err := parseSnapshot(res)
	if err != nil {
		return nil, fmt.Errorf("corrupt session data under %s: %w", s.keys(id)[0], err)
	}
	return p, nil
}

func parseSnapshot(res []any) (*snapshot, error) {
	if len(res) != 6 {
		return nil, fmt.Errorf("read script returned %d values, want 6", len(res))
	}
	str := func(i int) string { v, _ := res[i].(string); return v }
	p := &snapshot{created: str(0), seq: str(2)}
	var err1, err2, err3 error
	p.createdNS, err1 = strconv.ParseInt(p.created, 10, 64)
	p.lastSeq, err2 = strconv.ParseInt(p.seq, 10, 64)
	p.turn, err3 = strconv.Atoi(str(3))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("session hash: %w", err)
	}
	if err := json.Unmarshal([]byte(str(1)), &p.meta); err != nil {
		return nil, fmt.Errorf("session hash: meta: %w", err)
	}
	if p.meta == nil {
		p.meta = map[string]string{}
	}
	raw, _ := res[4].([]any)
	if len(raw) > 0 {
		if int64(len(raw)) != p.lastSeq {
			return nil, fmt.Errorf("%d events stored for seq %d", len(raw), p.lastSeq)
		}
		p.events = make([]session.Event, len(raw))
		for i, r := range raw {
			rs, _ := r.(string)
			e, err := decode(rs, int64(i+1))
			if err != nil {
				return nil, err
			}
			p.events[i] = e
		}
	}
	flat, _ := res[5].([]any)
	p.state = make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		p.state[k] = v
	}
	return p, nil
}

// Get implements session.Store. The snapshot is one read script, so its
// events and state agree.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrap(id, "get", err)
	}
	p, err := s.read(ctx, id, true)
	if err != nil {
		return nil, s.wrap(id, "get", err)
	}
	// p is this call's own: its maps and events go to the caller as they are.
	if p.events == nil {
		p.events = []session.Event{}
	}
	return &session.Session{ID: id, Created: time.Unix(0, p.createdNS).UTC(), Meta: p.meta, Events: p.events, State: p.state}, nil
}

// State implements session.Store: the state hash and the session's
// position, without the events.
func (s *Store) State(ctx context.Context, id string) (map[string]string, int64, error) {
	if s.closed.Load() {
		return nil, 0, session.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, s.wrap(id, "state", err)
	}
	p, err := s.read(ctx, id, false)
	if err != nil {
		return nil, 0, s.wrap(id, "state", err)
	}
	return p.state, p.lastSeq, nil
}

// pending is an event ready for the append script.
type pending struct {
	startsTurn bool
	rec        []byte
	delta      map[string]*string
}

// write runs appendScript for evs under token, a new random one for each
// write. With expect set, the session must still be at the position read
// there (errConflict otherwise). It returns the first Seq and each
// event's Turn.
func (s *Store) write(ctx context.Context, id, token string, expect *snapshot, evs []pending) (int64, []int, error) {
	created, seq := "", "0"
	if expect != nil {
		created, seq = expect.created, expect.seq
	}
	args := []any{token, s.ttlMS, created, seq, len(evs)}
	for _, p := range evs {
		flag := "0"
		if p.startsTurn {
			flag = "1"
		}
		var set, del []any
		for k, v := range p.delta {
			if v == nil {
				del = append(del, k)
			} else {
				set = append(set, k, *v)
			}
		}
		args = append(args, flag, p.rec, len(set)/2)
		args = append(args, set...)
		args = append(args, len(del))
		args = append(args, del...)
	}
	res, err := do(ctx, func(ctx context.Context) ([]string, error) {
		return appendScript.Run(ctx, s.client, s.keys(id), args...).StringSlice()
	})
	if err != nil {
		return 0, nil, s.explain(ctx, err)
	}
	switch {
	case len(res) == 1 && res[0] == "missing":
		return 0, nil, driver.NotFound(id)
	case len(res) == 1 && res[0] == "conflict":
		return 0, nil, errConflict
	case len(res) != 2 || res[0] != "ok":
		return 0, nil, fmt.Errorf("append script returned %q", res)
	}
	fields := strings.Fields(res[1])
	if len(fields) != len(evs)+1 {
		return 0, nil, fmt.Errorf("append script acknowledged %q for %d events", res[1], len(evs))
	}
	first, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("append script returned seq %q: %w", fields[0], err)
	}
	turns := make([]int, len(evs))
	for i, f := range fields[1:] {
		if turns[i], err = strconv.Atoi(f); err != nil {
			return 0, nil, fmt.Errorf("append script returned turn %q: %w", f, err)
		}
	}
	return first, turns, nil
}

// Append implements session.Store. Without a hook it is one script that
// cannot conflict; under a hook it is an optimistic write (see the
// package comment).
func (s *Store) Append(ctx context.Context, id string, ev session.Event) (session.Event, error) {
	if s.closed.Load() {
		return session.Event{}, session.ErrClosed
	}
	e, err := driver.Prepare(ev, time.Now())
	if err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	if err := ctx.Err(); err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	unlock, err := s.locks.lock(ctx, id)
	if err != nil {
		return session.Event{}, s.wrap(id, "append", err)
	}
	defer unlock()
	if s.hook == nil {
		rec, err := encode(&e)
		if err != nil {
			return session.Event{}, s.wrap(id, "append", err)
		}
		first, turns, err := s.write(ctx, id, session.NewID(), nil, []pending{{e.Kind.StartsTurn(), rec, e.StateDelta}})
		if err != nil {
			return session.Event{}, s.wrap(id, "append", err)
		}
		e.Seq, e.Turn = first, turns[0]
		return e, nil
	}
	out, err := s.optimistic(ctx, id, true, func(*snapshot) ([]session.Event, error) { return []session.Event{e}, nil })
	if err != nil {
		return session.Event{}, err
	}
	return out[0], nil
}

// AppendFunc implements session.Store: build runs on the state as read,
// and its events are written only if the session has not changed since;
// otherwise the state is read again and build runs again.
func (s *Store) AppendFunc(ctx context.Context, id string, build session.BuildFunc) ([]session.Event, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrap(id, "append", err)
	}
	unlock, err := s.locks.lock(ctx, id)
	if err != nil {
		return nil, s.wrap(id, "append", err)
	}
	defer unlock()
	return s.optimistic(ctx, id, false, func(p *snapshot) ([]session.Event, error) {
		evs, err := build(maps.Clone(p.state), p.lastSeq)
		if err != nil {
			return nil, s.wrap(id, "append", err)
		}
		now := time.Now()
		prepared := make([]session.Event, len(evs))
		for i, ev := range evs {
			if prepared[i], err = driver.Prepare(ev, now); err != nil {
				return nil, s.wrap(id, fmt.Sprintf("append event %d of %d", i+1, len(evs)), err)
			}
		}
		return prepared, nil
	})
}

// optimistic reads the session, gets its prepared events from events,
// runs the hook on each and writes them if the session is still as read,
// trying again on a conflict. single says the events are one Append's.
// Errors are wrapped.
func (s *Store) optimistic(ctx context.Context, id string, single bool, events func(*snapshot) ([]session.Event, error)) ([]session.Event, error) {
	for attempt := 1; ; attempt++ {
		p, err := s.read(ctx, id, s.hook != nil)
		if err != nil {
			return nil, s.wrap(id, "append", err)
		}
		evs, err := events(p)
		if err != nil {
			return nil, err
		}
		out, pend, err := s.stage(ctx, id, p, evs, single)
		if err != nil {
			return nil, err
		}
		if len(pend) == 0 {
			return out, nil
		}
		_, _, err = s.write(ctx, id, session.NewID(), p, pend)
		switch {
		case err == nil:
			return out, nil
		case !errors.Is(err, errConflict):
			return nil, s.wrap(id, "append", err)
		case attempt >= s.maxAttempts:
			return nil, s.wrap(id, "append", fmt.Errorf("%w: tried %d times (Options.MaxAttempts); another process writes to this session as fast as it is read", ErrContention, attempt))
		}
		if err := backoff(ctx, attempt); err != nil {
			return nil, s.wrap(id, "append", err)
		}
	}
}

// stage numbers evs from p and runs the hook on each, handing it the
// session with the events staged before it. Nothing is written. evs are
// not changed, so a retry starts from them again; the events returned are
// copies no hook can reach.
func (s *Store) stage(ctx context.Context, id string, p *snapshot, evs []session.Event, single bool) ([]session.Event, []pending, error) {
	var cur *session.Session
	if s.hook != nil {
		cur = &session.Session{ID: id, Created: time.Unix(0, p.createdNS).UTC(), Meta: p.meta, Events: slices.Clip(p.events), State: maps.Clone(p.state)}
	}
	seq, turn := p.lastSeq, p.turn
	out := make([]session.Event, 0, len(evs))
	pend := make([]pending, 0, len(evs))
	for i := range evs {
		e := evs[i].Clone()
		var sess *session.Session
		if cur != nil {
			sess = cur.Clone()
		}
		var staged session.Event
		var rec []byte
		commit := func(e *session.Event) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			e.Seq, e.Turn = seq+1, turn
			if e.Kind.StartsTurn() {
				e.Turn++
			}
			var err error
			if rec, err = encode(e); err != nil {
				return err
			}
			staged = e.Clone()
			return nil
		}
		if err := driver.RunHook(ctx, s.hook, sess, &e, commit); err != nil {
			op := "append"
			if !single {
				op = fmt.Sprintf("append event %d of %d", i+1, len(evs))
			}
			return nil, nil, s.wrap(id, op, err)
		}
		seq, turn = staged.Seq, staged.Turn
		out = append(out, staged)
		pend = append(pend, pending{staged.Kind.StartsTurn(), rec, staged.StateDelta})
		if cur != nil {
			cur.Events = append(cur.Events, staged.Clone())
			session.ApplyDelta(cur.State, staged.StateDelta)
		}
	}
	return out, pend, nil
}

// do runs call, one exchange with Redis, and returns early with ctx's
// error when ctx ends first: the client notices a cancelled context only
// when the reply arrives. The exchange then finishes unseen, so a write
// may still take effect, as with any request whose answer is not awaited.
func do[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	if ctx.Done() == nil {
		return call(ctx)
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := call(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// backoff waits a random while, longer after each failed attempt, so
// writers that keep colliding spread out.
func backoff(ctx context.Context, attempt int) error {
	limit := min(50*time.Millisecond, 500*time.Microsecond<<min(attempt, 10))
	t := time.NewTimer(rand.N(limit) + time.Microsecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// listBatch is how many sessions List reads in one round trip.
const listBatch = 512

// List implements session.Store. It does not refresh the sessions'
// expiry; sessions that expired are dropped from the index.
func (s *Store) List(ctx context.Context) ([]session.Info, error) {
	if s.closed.Load() {
		return nil, session.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrapList(err)
	}
	ids, err := do(ctx, func(ctx context.Context) ([]string, error) { return s.client.ZRange(ctx, s.index(), 0, -1).Result() })
	if err != nil {
		return nil, s.wrapList(s.explain(ctx, err))
	}
	out := make([]session.Info, 0, len(ids))
	var gone []string
	for chunk := range slices.Chunk(ids, listBatch) {
		pipe := s.client.Pipeline()
		cmds := make([]*redis.SliceCmd, len(chunk))
		for i, id := range chunk {
			cmds[i] = pipe.HMGet(ctx, s.keys(id)[0], "created", "meta", "seq")
		}
		if _, err := do(ctx, pipe.Exec); err != nil {
			return nil, s.wrapList(s.explain(ctx, err))
		}
		for i, id := range chunk {
			v := cmds[i].Val()
			created, _ := v[0].(string)
			meta, _ := v[1].(string)
			seq, _ := v[2].(string)
			if created == "" {
				gone = append(gone, id)
				continue
			}
			in := session.Info{ID: id}
			ns, err1 := strconv.ParseInt(created, 10, 64)
			last, err2 := strconv.ParseInt(seq, 10, 64)
			err3 := json.Unmarshal([]byte(meta), &in.Meta)
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, s.wrapList(fmt.Errorf("session %q: corrupt session hash %s: %w", id, s.keys(id)[0], err))
			}
			if in.Meta == nil {
				in.Meta = map[string]string{}
			}
			in.Created, in.LastSeq = time.Unix(0, ns).UTC(), last
			out = append(out, in)
		}
	}
	for chunk := range slices.Chunk(gone, listBatch) {
		keys := []string{s.index()}
		args := make([]any, len(chunk))
		for i, id := range chunk {
			keys, args[i] = append(keys, s.keys(id)[0]), id
		}
		if _, err := do(ctx, func(ctx context.Context) (any, error) { return pruneScript.Run(ctx, s.client, keys, args...).Result() }); err != nil {
			return nil, s.wrapList(s.explain(ctx, err))
		}
	}
	slices.SortFunc(out, func(a, b session.Info) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Delete implements session.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if s.closed.Load() {
		return session.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return s.wrap(id, "delete", err)
	}
	n, err := do(ctx, func(ctx context.Context) (int, error) {
		return deleteScript.Run(ctx, s.client, append(s.keys(id), s.index()), id).Int()
	})
	if err != nil {
		return s.wrap(id, "delete", s.explain(ctx, err))
	}
	if n == 0 {
		return s.wrap(id, "delete", driver.NotFound(id))
	}
	return nil
}

// wrap names the server, the session and the operation. ErrNotFound
// already names the session.
func (s *Store) wrap(id, op string, err error) error {
	if errors.Is(err, session.ErrNotFound) {
		return fmt.Errorf("redisstore %s: %s: %w", s.addr, op, err)
	}
	return fmt.Errorf("redisstore %s: session %q: %s: %w", s.addr, id, op, err)
}

func (s *Store) wrapList(err error) error {
	return fmt.Errorf("redisstore %s: list (prefix %q): %w", s.addr, s.prefix, err)
}

// explain turns a client error into one that says what to check. A
// context that ended is reported as such, whatever the client made of it.
func (s *Store) explain(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, redis.ErrClosed):
		return fmt.Errorf("%w (%v)", session.ErrClosed, err)
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, redis.ErrPoolTimeout):
		return fmt.Errorf("cannot reach Redis: %w; check that redis-server is running and listening on %s (Options.Addr) and that no firewall or TLS setting is in the way", err, s.addr)
	case strings.HasPrefix(msg, "NOAUTH"), strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOPERM"):
		return fmt.Errorf("Redis refused the credentials: %w; set the user and password on Options.Client", err)
	case strings.HasPrefix(msg, "LOADING"):
		return fmt.Errorf("Redis is still loading its data after a restart: %w; try again in a moment", err)
	case strings.HasPrefix(msg, "MISCONF"):
		return fmt.Errorf("Redis cannot persist writes: %w; check the server's disk and log", err)
	case strings.HasPrefix(msg, "READONLY"):
		return fmt.Errorf("Redis is a read-only replica: %w; point the store at the primary", err)
	case strings.HasPrefix(msg, "OOM"):
		return fmt.Errorf("Redis is out of memory: %w; raise its maxmemory, or set Options.IdleTTL so idle sessions expire", err)
	}
	return err
}

// sessionLocks serializes one process's writers per session, so they do
// not conflict with each other; other processes are caught by the
// optimistic writes.
type sessionLocks struct {
	mu sync.Mutex
	m  map[string]*sessionLock
}

type sessionLock struct {
	ch   chan struct{}
	refs int
}

// lock takes the lock of session id, waiting as long as ctx allows, and
// returns its release.
func (l *sessionLocks) lock(ctx context.Context, id string) (func(), error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*sessionLock)
	}
	sl := l.m[id]
	if sl == nil {
		sl = &sessionLock{ch: make(chan struct{}, 1)}
		l.m[id] = sl
	}
	sl.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
	select {
	case sl.ch <- struct{}{}:
		return func() { <-sl.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
