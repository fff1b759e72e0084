package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/redisstore"
	"github.com/skillkit/skillkit/session/sessiontest"
)

func TestConformance(t *testing.T) {
	srv := startServer(t, fast...)
	for _, mode := range []struct {
		name string
		ttl  time.Duration
	}{{"no expiry", 0}, {"idle TTL", time.Hour}} {
		t.Run(mode.name, func(t *testing.T) {
			sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
				o := &redisstore.Options{IdleTTL: mode.ttl}
				if opts != nil {
					o.AppendHook = opts.AppendHook
				}
				return openStore(t, srv, o)
			})
		})
	}
}

// The suite's concurrent tests again, with the writers spread over two
// stores as two processes would be: their appends meet in Redis, not in
// one process's locks.
func TestConformanceTwoClients(t *testing.T) {
	srv := startServer(t, fast...)
	sessiontest.Run(t, func(t *testing.T, opts *session.Options) session.Store {
		o := &redisstore.Options{}
		if opts != nil {
			o.AppendHook = opts.AppendHook
		}
		a := openStore(t, srv, o)
		o.Prefix = a.Prefix()
		b := openStore(t, srv, o)
		return &alternating{Store: a, other: b}
	})
}

// alternating sends every other write through a second store on the same
// server and prefix.
type alternating struct {
	*redisstore.Store
	other *redisstore.Store
	n     atomic.Int64
}

func (s *alternating) pick() session.Store {
	if s.n.Add(1)%2 == 0 {
		return s.other
	}
	return s.Store
}

func (s *alternating) Append(ctx context.Context, id string, ev session.Event) (session.Event, error) {
	return s.pick().Append(ctx, id, ev)
}

func (s *alternating) AppendFunc(ctx context.Context, id string, build session.BuildFunc) ([]session.Event, error) {
	return s.pick().AppendFunc(ctx, id, build)
}

func (s *alternating) Close() error {
	_ = s.other.Close()
	return s.Store.Close()
}

// rawClient is a plain connection to srv for looking at the keys.
func rawClient(t testing.TB, srv *server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestOpenOptions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		opts redisstore.Options
		want string
	}{
		{"negative TTL", redisstore.Options{IdleTTL: -time.Second}, "Options.IdleTTL"},
		{"TTL under the minimum", redisstore.Options{IdleTTL: redisstore.MinIdleTTL - time.Microsecond}, "Options.IdleTTL"},
		{"negative attempts", redisstore.Options{MaxAttempts: -1}, "Options.MaxAttempts"},
		{"address without port", redisstore.Options{Addr: "localhost"}, "Options.Addr"},
		{"address and client", redisstore.Options{Addr: "127.0.0.1:1", Client: redis.NewClient(&redis.Options{})}, "Options.Addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := redisstore.Open(ctx, &tt.opts)
			if err == nil {
				st.Close()
				t.Fatalf("Open succeeded, want an error naming %s", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open error = %v, want it to name %s", err, tt.want)
			}
		})
	}
	// The limits themselves are accepted.
	srv := startServer(t, fast...)
	openStore(t, srv, &redisstore.Options{IdleTTL: redisstore.MinIdleTTL, MaxAttempts: 1})
}

// A server that is not there, or goes away, is named in the error with
// what to check; the store works again once the server is back.
func TestServerDown(t *testing.T) {
	ctx := context.Background()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	_, err := redisstore.Open(ctx, &redisstore.Options{Addr: addr})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "check that redis-server is running") {
		t.Fatalf("Open(nothing listening) error = %v, want one naming %s and what to check", err, addr)
	}

	srv := startServer(t, fast...)
	st := openStore(t, srv, nil)
	if _, err := st.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	srv.kill()
	start := time.Now()
	_, err = st.Append(ctx, "s", session.Event{Kind: session.KindUser})
	if err == nil || !strings.Contains(err.Error(), srv.Addr) || !strings.Contains(err.Error(), "check that redis-server is running") {
		t.Fatalf("Append with the server down: error = %v, want one naming %s and what to check", err, srv.Addr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Append with the server down took %v to fail", took)
	}
	srv.restart() // without persistence, the session is gone with the server
	if _, err := st.Create(ctx, "s", nil); err != nil {
		t.Fatalf("Create after the server came back: %v", err)
	}
	if _, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser}); err != nil {
		t.Fatalf("Append after the server came back: %v", err)
	}
}

// A deadline bounds both the wait for the session's lock in this process
// and the wait for a server that does not answer.
func TestContextDeadline(t *testing.T) {
	srv := startServer(t, fast...)
	release := make(chan struct{})
	entered := make(chan struct{})
	st := openStore(t, srv, &redisstore.Options{AppendHook: func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
		if ev.Text == "slow" {
			close(entered)
			<-release
		}
		return next()
	}})
	ctx := context.Background()
	if _, err := st.Create(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		_, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser, Text: "slow"})
		slow <- err
	}()
	<-entered
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := st.Append(short, "s", session.Event{Kind: session.KindUser, Text: "waits"})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Append waiting for the session's lock: error = %v, want context.DeadlineExceeded", err)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}

	raw := rawClient(t, srv)
	if err := raw.Do(ctx, "CLIENT", "PAUSE", "1000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	defer raw.Do(ctx, "CLIENT", "UNPAUSE")
	short, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = st.Get(short, "s")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get from a paused server: error = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Get from a paused server returned after %v; the deadline was 100ms", took)
	}
	// A context cancelled without a deadline ends the wait too.
	cancelled, cancelNow := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancelNow)
	start = time.Now()
	_, err = st.Append(cancelled, "s", session.Event{Kind: session.KindUser})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Append to a paused server: error = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Append to a paused server returned after %v; the context was cancelled after 100ms", took)
	}
}

func TestIdleTTL(t *testing.T) {
	const ttl = time.Second
	srv := startServer(t, fast...)
	st := openStore(t, srv, &redisstore.Options{IdleTTL: ttl})
	raw := rawClient(t, srv)
	ctx := context.Background()
	for _, id := range []string{"kept", "idle"} {
		if _, err := st.Create(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Append(ctx, id, session.Event{Kind: session.KindUser, StateDelta: map[string]*string{"k": session.Ptr("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"s:{kept}", "e:{kept}", "st:{kept}", "a:{kept}"} {
		if d := raw.PTTL(ctx, st.Prefix()+key).Val(); d <= 0 || d > ttl {
			t.Errorf("PTTL %s = %v, want in (0, %v]", key, d, ttl)
		}
	}
	// Reads and writes keep "kept" alive past the TTL; "idle" expires.
	deadline := time.Now().Add(ttl * 3 / 2)
	for i := 0; time.Now().Before(deadline); i++ {
		time.Sleep(ttl / 10)
		var err error
		switch i % 3 {
		case 0:
			_, err = st.Get(ctx, "kept")
		case 1:
			_, _, err = st.State(ctx, "kept")
		case 2:
			_, err = st.Append(ctx, "kept", session.Event{Kind: session.KindState})
		}
		if err != nil {
			t.Fatalf("kept session: %v", err)
		}
	}
	if _, err := st.Get(ctx, "idle"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get(idle) after %v without use: error = %v, want ErrNotFound", ttl*3/2, err)
	}
	list, err := st.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "kept" {
		t.Fatalf("List = %v, %v; want only the kept session", list, err)
	}
	if n := raw.ZCard(ctx, st.Prefix()+"sessions").Val(); n != 1 {
		t.Errorf("index holds %d sessions after List, want the expired one dropped", n)
	}
	if keys := raw.Keys(ctx, st.Prefix()+"*{idle}*").Val(); len(keys) != 0 {
		t.Errorf("keys of the expired session remain: %v", keys)
	}
	// The same ID can be created again, fresh.
	if _, err := st.Create(ctx, "idle", nil); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Get(ctx, "idle"); err != nil || len(s.Events) != 0 || len(s.State) != 0 {
		t.Fatalf("recreated session = %+v, %v; want it empty", s, err)
	}

	// Without IdleTTL a write takes an expiry an earlier setting gave away.
	st2 := openStore(t, srv, &redisstore.Options{Prefix: st.Prefix()})
	if _, err := st2.Append(ctx, "kept", session.Event{Kind: session.KindState, StateDelta: map[string]*string{"k": session.Ptr("w")}}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"s:{kept}", "e:{kept}", "st:{kept}", "a:{kept}"} {
		if d := raw.PTTL(ctx, st.Prefix()+key).Val(); d != -1 {
			t.Errorf("PTTL %s = %v after a write without IdleTTL, want none (-1ns)", key, d)
		}
	}
}

// The keys are the ones the package comment documents, and an event is
// stored as the JSON it describes.
func TestKeyLayout(t *testing.T) {
	srv := startServer(t, fast...)
	st := openStore(t, srv, &redisstore.Options{Prefix: "app1:"})
	other := openStore(t, srv, &redisstore.Options{Prefix: "app2:"})
	raw := rawClient(t, srv)
	ctx := context.Background()
	if _, err := st.Create(ctx, "chat", map[string]string{"mode": "turn"}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(ctx, "chat", nil); err != nil {
		t.Fatalf("the same ID under another prefix: %v", err)
	}
	ev, err := st.Append(ctx, "chat", session.Event{Kind: session.KindUser, ID: "e1", Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Text: "hi", StateDelta: map[string]*string{"a": session.Ptr("1"), "gone": nil}})
	if err != nil {
		t.Fatal(err)
	}
	keys := raw.Keys(ctx, "app1:*").Val()
	slices.Sort(keys)
	want := []string{"app1:a:{chat}", "app1:e:{chat}", "app1:s:{chat}", "app1:sessions", "app1:st:{chat}"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	hash := raw.HGetAll(ctx, "app1:s:{chat}").Val()
	if hash["meta"] != `{"mode":"turn"}` || hash["seq"] != "1" || hash["turn"] != "1" || hash["created"] == "" {
		t.Errorf("session hash = %v", hash)
	}
	stored := raw.LIndex(ctx, "app1:e:{chat}", 0).Val()
	wantJSON := `{"seq":1,"turn":1,"id":"e1","time":"2026-01-02T03:04:05.000000006Z","kind":"user","text":"hi","state_delta":{"a":"1","gone":null}}`
	if stored != wantJSON {
		t.Errorf("stored event\n got %s\nwant %s", stored, wantJSON)
	}
	if got := raw.HGetAll(ctx, "app1:st:{chat}").Val(); !maps.Equal(got, map[string]string{"a": "1"}) {
		t.Errorf("state hash = %v", got)
	}
	if ev.Seq != 1 || ev.Turn != 1 {
		t.Errorf("Append returned Seq %d Turn %d", ev.Seq, ev.Turn)
	}
	if err := st.Delete(ctx, "chat"); err != nil {
		t.Fatal(err)
	}
	if keys := raw.Keys(ctx, "app1:*").Val(); len(keys) != 0 {
		t.Errorf("keys left after Delete: %v", keys)
	}
	if _, err := other.Get(ctx, "chat"); err != nil {
		t.Errorf("Delete under app1 touched app2: %v", err)
	}
}

// AppendFunc gives up after Options.MaxAttempts tries when another
// process changes the session each time, and succeeds on the last try.
func TestMaxAttempts(t *testing.T) {
	srv := startServer(t, fast...)
	ctx := context.Background()
	const limit = 3
	for _, tt := range []struct {
		name        string
		interfere   int // how many builds another writer follows with an append
		wantErr     error
		wantBuilds  int
		wantLastSeq int64
	}{
		{"succeeds on the last try", limit - 1, nil, limit, limit},
		{"gives up", limit, redisstore.ErrContention, limit, limit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t, srv, &redisstore.Options{MaxAttempts: limit})
			other := openStore(t, srv, &redisstore.Options{Prefix: st.Prefix()})
			if _, err := st.Create(ctx, "s", nil); err != nil {
				t.Fatal(err)
			}
			builds := 0
			_, err := st.AppendFunc(ctx, "s", func(state map[string]string, last int64) ([]session.Event, error) {
				builds++
				if builds <= tt.interfere {
					if _, err := other.Append(ctx, "s", session.Event{Kind: session.KindState, Text: "other"}); err != nil {
						return nil, err
					}
				}
				return []session.Event{{Kind: session.KindState, Text: "mine"}}, nil
			})
			if !errors.Is(err, tt.wantErr) || (err != nil && !strings.Contains(err.Error(), "Options.MaxAttempts")) {
				t.Fatalf("AppendFunc error = %v, want %v", err, tt.wantErr)
			}
			if builds != tt.wantBuilds {
				t.Errorf("build ran %d times, want %d", builds, tt.wantBuilds)
			}
			s, err := st.Get(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if s.LastSeq() != tt.wantLastSeq {
				t.Errorf("LastSeq = %d, want %d", s.LastSeq(), tt.wantLastSeq)
			}
		})
	}
}

// proxy forwards TCP connections to a server; armed, it drops the next
// reply and closes that connection, as a network failure after the
// server ran a command would.
type proxy struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	drops  atomic.Int32
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	go func() { _, _ = io.Copy(server, client); _ = server.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && p.armed.CompareAndSwap(true, false) {
			p.drops.Add(1)
			break
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = client.Close()
	_ = server.Close()
}

// An append whose reply is lost is sent again by the client, and stored
// once.
func TestResentWriteStoredOnce(t *testing.T) {
	srv := startServer(t, fast...)
	p := startProxy(t, srv.Addr)
	ctx := context.Background()
	for _, hooked := range []bool{false, true} {
		t.Run(fmt.Sprintf("hook %v", hooked), func(t *testing.T) {
			var opts redisstore.Options
			opts.Client = redis.NewClient(&redis.Options{Addr: p.ln.Addr().String(), DisableIdentity: true, ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = opts.Client.Close() })
			if hooked {
				// Armed here, between the read and the write, the proxy
				// drops the write's reply.
				opts.AppendHook = func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
					if ev.Text == "second" {
						p.armed.Store(true)
					}
					return next()
				}
			}
			st := openStore(t, srv, &opts)
			// Warm up, so the reply dropped is the script's own, not a
			// NOSCRIPT answer the client follows with the script's text.
			if _, err := st.Create(ctx, "warm", nil); err != nil {
				t.Fatal(err)
			}
			drops := p.drops.Load()
			p.armed.Store(true)
			if _, err := st.Create(ctx, "s", nil); err != nil {
				t.Fatalf("Create after a lost reply: %v", err)
			}
			if p.drops.Load() != drops+1 {
				t.Fatal("the proxy dropped no reply to Create")
			}
			if _, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser, Text: "first"}); err != nil {
				t.Fatal(err)
			}
			drops = p.drops.Load()
			if !hooked {
				p.armed.Store(true)
			}
			ev, err := st.Append(ctx, "s", session.Event{Kind: session.KindUser, Text: "second"})
			if err != nil {
				t.Fatalf("Append after a lost reply: %v", err)
			}
			if p.drops.Load() != drops+1 {
				t.Fatal("the proxy dropped no reply; the test did not test anything")
			}
			s, err := st.Get(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, e := range s.Events {
				texts = append(texts, e.Text)
			}
			if diff := cmp.Diff([]string{"first", "second"}, texts); diff != "" || ev.Seq != 2 || ev.Turn != 2 {
				t.Errorf("after a resent append: Seq %d Turn %d, events (-want +got):\n%s", ev.Seq, ev.Turn, diff)
			}
		})
	}
}

// A session remembers the tokens of its newest KeepAcks writes: a write
// resent after KeepAcks-1 others is recognised, one resent after KeepAcks
// others is stored again.
func TestResendWindow(t *testing.T) {
	srv := startServer(t, fast...)
	st := openStore(t, srv, nil)
	ctx := context.Background()
	for _, tt := range []struct {
		between int
		wantNew bool
	}{{redisstore.KeepAcks - 1, false}, {redisstore.KeepAcks, true}} {
		t.Run(fmt.Sprint(tt.between, " writes between"), func(t *testing.T) {
			id := fmt.Sprint("window-", tt.between)
			if _, err := st.Create(ctx, id, nil); err != nil {
				t.Fatal(err)
			}
			token := session.NewID()
			first, err := redisstore.AppendWithToken(ctx, st, id, token, session.Event{Kind: session.KindUser, Text: "once"})
			if err != nil {
				t.Fatal(err)
			}
			for range tt.between {
				if _, err := st.Append(ctx, id, session.Event{Kind: session.KindState}); err != nil {
					t.Fatal(err)
				}
			}
			again, err := redisstore.AppendWithToken(ctx, st, id, token, session.Event{Kind: session.KindUser, Text: "once"})
			if err != nil {
				t.Fatal(err)
			}
			s, err := st.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			wantLen := 1 + tt.between
			if tt.wantNew {
				wantLen++
			}
			if (again != first) == !tt.wantNew || len(s.Events) != wantLen {
				t.Errorf("resent write: Seq %d (first %d), %d events; want stored again: %v", again, first, len(s.Events), tt.wantNew)
			}
		})
	}
}

// List reads sessions in batches and drops expired ones from the index,
// past one batch of either.
func TestListManySessions(t *testing.T) {
	srv := startServer(t, fast...)
	st := openStore(t, srv, nil)
	raw := rawClient(t, srv)
	ctx := context.Background()
	const n, expire = 1100, 600 // over two batches of 512; over one
	var want []string
	for i := range n {
		id := fmt.Sprintf("s%04d", i)
		if _, err := st.Create(ctx, id, map[string]string{"i": strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
		if i >= expire {
			want = append(want, id)
		}
	}
	// Expire the first ones as IdleTTL would: their keys vanish, the
	// index keeps their IDs.
	for i := range expire {
		raw.Del(ctx, st.Prefix()+fmt.Sprintf("s:{s%04d}", i))
	}
	list, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range list {
		got = append(got, in.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if z := raw.ZCard(ctx, st.Prefix()+"sessions").Val(); z != int64(n-expire) {
		t.Errorf("index holds %d IDs after List, want %d", z, n-expire)
	}
}
