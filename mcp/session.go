package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit"
	skstore "github.com/skillkit/skillkit/session"
)

// endTimeout bounds how long ending a session waits for its workspace to
// go (a command still running in it is killed first).
const endTimeout = 30 * time.Second

// session is one client's skillkit session: its conversation (load state)
// and, through the kit, its workspace.
type session struct {
	id   string
	conv *skillkit.Conversation
	// calls holds a token per running tool call (Options.MaxCalls).
	calls chan struct{}
	// stateless marks a 2026-07-28 client's session, found by its ID in
	// _meta rather than by its connection.
	stateless bool
	// ctx ends when the session does: its calls run under it, so ending a
	// session stops the commands it runs before its workspace goes.
	ctx    context.Context
	cancel context.CancelFunc

	// The fields below are guarded by the table's mutex.
	last    time.Time // when the last call started or ended
	running int       // calls in progress
	ended   bool
}

// sessionTable maps connections (stdio, session-based HTTP) and stateless
// session IDs to sessions.
type sessionTable struct {
	s *Server

	mu     sync.Mutex
	byConn map[*sdk.ServerSession]*session
	byID   map[string]*session // stateless sessions
	count  int
	closed bool
	// finishing counts the sessions being finished outside closeAll,
	// which it waits for: the kit must outlive their cleanup.
	finishing sync.WaitGroup
}

func newSessionTable(s *Server) *sessionTable {
	return &sessionTable{s: s, byConn: map[*sdk.ServerSession]*session{}, byID: map[string]*session{}}
}

// errUnknownSession is returned for a stateless call naming a session the
// server does not have (never issued, ended or idled out).
var errUnknownSession = errors.New("unknown session")

// acquire returns the session of a tool call, making it on first use, with
// a call token taken; release gives the token back. A stateless call names
// its session in _meta (none: a new session).
func (t *sessionTable) acquire(ctx context.Context, req *sdk.CallToolRequest, stateless bool) (*session, func(), error) {
	var id string
	if stateless {
		if v, ok := req.Params.Meta[SessionMetaKey]; ok {
			s, isString := v.(string)
			if !isString || s == "" {
				return nil, nil, fmt.Errorf("_meta[%q] must be a session ID string that an earlier result gave; leave it out to start a new session", SessionMetaKey)
			}
			id = s
		}
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, nil, errors.New("the server is shutting down")
	}
	var sess *session
	adopt := false
	switch {
	case !stateless:
		sess = t.byConn[req.Session]
	case id != "":
		if sess = t.byID[id]; sess == nil && !t.s.o.Shared {
			t.mu.Unlock()
			return nil, nil, unknownSession(id)
		}
		adopt = sess == nil
	}
	if sess == nil {
		if t.count >= t.s.o.MaxSessions && !t.evictLocked() {
			t.mu.Unlock()
			return nil, nil, fmt.Errorf("the server has %d sessions, its limit; try again when one ends", t.count)
		}
		t.count++ // reserved while the conversation opens
		t.mu.Unlock()
		var conv *skillkit.Conversation
		var err error
		if adopt {
			// A session another server of the shared store started (or
			// this one, before it forgot it) continues here.
			conv, err = t.s.adopt(ctx, id)
		} else {
			conv, err = t.s.kit.Open(ctx, "", t.s.o.Agent)
		}
		t.mu.Lock()
		if sess, err = t.installLocked(req.Session, conv, err, adopt, stateless); err != nil {
			t.mu.Unlock()
			return nil, nil, err
		}
	}
	select {
	case sess.calls <- struct{}{}:
	default:
		t.mu.Unlock()
		return nil, nil, fmt.Errorf("this session already runs %d tool calls, its limit; wait for one to finish", cap(sess.calls))
	}
	sess.running++
	sess.last = time.Now()
	t.mu.Unlock()
	return sess, func() {
		<-sess.calls
		t.mu.Lock()
		sess.running--
		sess.last = time.Now()
		t.mu.Unlock()
	}, nil
}

// installLocked records the conversation a call opened (err: why it
// could not), unless another call of the same client or session did so
// meanwhile; the slot the call reserved in count is used or given back.
func (t *sessionTable) installLocked(ss *sdk.ServerSession, conv *skillkit.Conversation, err error, adopted, stateless bool) (*session, error) {
	if err == nil && t.closed {
		err = errors.New("the server is shutting down")
		if !adopted {
			_ = t.s.kit.Store().Delete(context.Background(), conv.ID())
		}
	}
	if err != nil {
		t.count--
		return nil, err
	}
	if existing := t.byID[conv.ID()]; adopted && existing != nil {
		t.count-- // another call adopted it meanwhile
		return existing, nil
	}
	if existing := t.byConn[ss]; !stateless && existing != nil {
		// Another first call of this connection won the race.
		t.count--
		go func() { _ = t.s.kit.Store().Delete(context.Background(), conv.ID()) }()
		return existing, nil
	}
	return t.addLocked(ss, conv, stateless), nil
}

// unknownSession is the error of a stateless call naming a session the
// server does not have.
func unknownSession(id string) error {
	return fmt.Errorf("%w %q: this server never issued it, or it ended or idled out; leave _meta[%q] out to start a new session", errUnknownSession, id, SessionMetaKey)
}

// adopt opens session id, which must exist in the kit's store.
func (s *Server) adopt(ctx context.Context, id string) (*skillkit.Conversation, error) {
	if _, _, err := s.kit.Store().State(ctx, id); errors.Is(err, skstore.ErrNotFound) || errors.Is(err, skstore.ErrInvalidArgument) {
		return nil, unknownSession(id)
	} else if err != nil {
		return nil, err
	}
	return s.kit.Open(ctx, id, s.o.Agent)
}

// addLocked records a new session of conv; a connection's session ends
// when the connection does.
func (t *sessionTable) addLocked(ss *sdk.ServerSession, conv *skillkit.Conversation, stateless bool) *session {
	sess := &session{id: conv.ID(), conv: conv, calls: make(chan struct{}, t.s.o.MaxCalls), stateless: stateless}
	sess.ctx, sess.cancel = context.WithCancel(context.Background())
	if stateless {
		t.byID[sess.id] = sess
		return sess
	}
	t.byConn[ss] = sess
	go func() {
		_ = ss.Wait()
		t.endConn(ss)
	}()
	return sess
}

// evictLocked ends the stateless session idle the longest, to make room;
// it reports whether there was one.
func (t *sessionTable) evictLocked() bool {
	var oldest *session
	for _, s := range t.byID {
		if s.running == 0 && (oldest == nil || s.last.Before(oldest.last)) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	t.removeLocked(oldest)
	t.finishing.Go(func() { _ = t.finish(oldest) })
	return true
}

// removeLocked takes sess out of the table.
func (t *sessionTable) removeLocked(sess *session) {
	if sess.ended {
		return
	}
	sess.ended = true
	sess.cancel()
	t.count--
	if sess.stateless {
		delete(t.byID, sess.id)
		return
	}
	for c, s := range t.byConn {
		if s == sess {
			delete(t.byConn, c)
		}
	}
}

// cancelConn stops the calls of the connection's session, which is
// ending (a DELETE, the end of stdio): the SDK waits for running calls
// before it lets the session go.
func (t *sessionTable) cancelConn(match func(*sdk.ServerSession) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for ss, sess := range t.byConn {
		if match(ss) {
			sess.cancel()
		}
	}
}

// endConn ends the session of a connection that closed.
func (t *sessionTable) endConn(ss *sdk.ServerSession) {
	t.mu.Lock()
	sess := t.byConn[ss]
	if sess != nil {
		t.removeLocked(sess)
		t.finishing.Add(1)
	}
	t.mu.Unlock()
	if sess != nil {
		_ = t.finish(sess)
		t.finishing.Done()
	}
}

// sweep ends the stateless sessions idle since before cutoff (the
// connection-based ones end with their connection, which the HTTP
// handler times out).
func (t *sessionTable) sweep(cutoff time.Time) {
	var idle []*session
	t.mu.Lock()
	for _, s := range t.byID {
		if s.running == 0 && s.last.Before(cutoff) {
			t.removeLocked(s)
			idle = append(idle, s)
		}
	}
	t.finishing.Add(len(idle))
	t.mu.Unlock()
	for _, s := range idle {
		_ = t.finish(s)
		t.finishing.Done()
	}
}

// finish removes a session's workspace and, unless kept, its events. A
// shared store's sessions are only forgotten here: another server may
// continue them, and the store's expiry and the workspaces' sweep end
// them.
func (t *sessionTable) finish(sess *session) error {
	if t.s.o.Shared {
		t.s.o.Logger.Debug("session forgotten (shared store)", "session", sess.id)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	err := t.s.kit.EndSession(ctx, sess.id)
	if !t.s.o.KeepSessions {
		err = errors.Join(err, t.s.kit.Store().Delete(ctx, sess.id))
	}
	if err != nil {
		t.s.o.Logger.Warn("ending a session", "session", sess.id, "error", err)
	} else {
		t.s.o.Logger.Debug("session ended", "session", sess.id)
	}
	return err
}

// running returns the number of tool calls in progress.
func (t *sessionTable) running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.byID {
		n += s.running
	}
	for _, s := range t.byConn {
		n += s.running
	}
	return n
}

// len returns the number of sessions alive.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}

// closeAll ends every session.
func (t *sessionTable) closeAll() error {
	t.mu.Lock()
	t.closed = true
	var all []*session
	for _, s := range t.byID {
		all = append(all, s)
	}
	for _, s := range t.byConn {
		all = append(all, s)
	}
	for _, s := range all {
		t.removeLocked(s)
	}
	t.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, t.finish(s))
	}
	t.finishing.Wait()
	return errors.Join(errs...)
}
