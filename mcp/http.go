package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of HTTPOptions.
const (
	// DefaultMaxBodyBytes bounds a request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultShutdownGrace is how long ListenAndServe lets running calls
	// finish after its context ends.
	DefaultShutdownGrace = 10 * time.Second
	// EndpointPath is where ListenAndServe serves MCP.
	EndpointPath = "/mcp"
	// statelessVersion is the first protocol revision without sessions.
	statelessVersion = "2026-07-28"
)

// HTTPOptions configure the streamable HTTP endpoint. The zero value
// serves loopback clients without a token.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN). ListenAndServe refuses an address
	// other than loopback without one.
	Token string
	// AllowedHosts are Host header values accepted besides loopback names
	// (localhost, 127.0.0.1, [::1], with any port): the names a proxy or
	// a remote client reaches the server by. Other Host headers are
	// refused with 403, against DNS rebinding.
	AllowedHosts []string
	// AllowedOrigins are Origin header values accepted besides loopback
	// origins (http://localhost:PORT and the like). A request without an
	// Origin (not from a browser) is accepted.
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body; 0 is DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ShutdownGrace is how long ListenAndServe waits for running calls
	// when its context ends; 0 is DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// MaxConns bounds the connections ListenAndServe keeps open at once;
	// one more is answered 503 and closed. 0 is DefaultMaxConns.
	MaxConns int
	// MaxStreams bounds the long-lived notification streams open at once
	// (subscriptions/listen, and the GET streams of sessions); one more
	// is answered 503. 0 is DefaultMaxStreams.
	MaxStreams int
}

// Defaults of the HTTPOptions bounds.
const (
	// DefaultMaxConns is far below the usual 1,024 descriptors a process
	// may open, so a flood of idle connections cannot starve the sandbox.
	DefaultMaxConns = 512
	// DefaultMaxStreams bounds the notification streams.
	DefaultMaxStreams = 64
)

// Handler returns the streamable HTTP endpoint: requests of protocol
// revision 2026-07-28 and later are served statelessly (a session is
// carried in _meta, see SessionMetaKey), earlier revisions in sessions
// (Mcp-Session-Id) that end on DELETE or after Options.IdleTimeout.
// Hostile requests (foreign Host or Origin, a missing or wrong token, an
// oversized body) are refused before the protocol sees them.
func (s *Server) Handler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	idle := s.o.IdleTimeout
	if idle < 0 {
		idle = 0
	}
	// The host checks are ours (they honour AllowedHosts); the SDK's
	// would refuse every name but loopback.
	stateful := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.stateful.sdk }, &sdk.StreamableHTTPOptions{
		SessionTimeout: idle, MaxRequestBodyBytes: o.MaxBodyBytes, DisableLocalhostProtection: true, Logger: s.o.Logger})
	stateless := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.stateless.sdk }, &sdk.StreamableHTTPOptions{
		Stateless: true, MaxRequestBodyBytes: o.MaxBodyBytes, DisableLocalhostProtection: true, Logger: s.o.Logger,
		PropagateRequestCancellation: true})
	h := &httpHandler{o: o, stateful: stateful, stateless: stateless, s: s, streams: make(chan struct{}, o.MaxStreams)}
	if o.Token != "" {
		sum := sha256.Sum256([]byte(o.Token))
		h.token = sum[:]
	}
	return h
}

// httpHandler checks a request, then routes it by protocol revision.
type httpHandler struct {
	o                   HTTPOptions
	token               []byte // sha256 of the token, or nil
	stateful, stateless http.Handler
	s                   *Server
	// streams holds a token per open notification stream.
	streams chan struct{}
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not served here (loopback names only; the operator can allow more with --allowed-host)", r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin) {
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed", origin), http.StatusForbidden)
		return
	}
	if h.token != nil && !h.authorized(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillkit"`)
		http.Error(w, "Unauthorized: send Authorization: Bearer TOKEN with the server's token", http.StatusUnauthorized)
		return
	}
	if r.ContentLength > h.o.MaxBodyBytes {
		http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the limit of %d", r.ContentLength, h.o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen" {
		select {
		case h.streams <- struct{}{}:
			defer func() { <-h.streams }()
		default:
			http.Error(w, fmt.Sprintf("Service Unavailable: %d notification streams are open, the limit; try again later", cap(h.streams)), http.StatusServiceUnavailable)
			return
		}
	}
	if isStateless(r) {
		h.stateless.ServeHTTP(w, r)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
		// The SDK lets a session go once its calls return: stop them.
		h.s.sessions.cancelConn(func(ss *sdk.ServerSession) bool { return ss.ID() == id })
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && h.s.stateful.count() >= h.s.o.MaxSessions {
		http.Error(w, fmt.Sprintf("Service Unavailable: the server has %d sessions, its limit; try again later", h.s.o.MaxSessions), http.StatusServiceUnavailable)
		return
	}
	h.stateful.ServeHTTP(w, r)
}

// isStateless reports whether r speaks a revision without sessions: its
// protocol version header says so, or it asks server/discover (the first
// request of such a client).
func isStateless(r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	return v >= statelessVersion || (v == "" && r.Header.Get("Mcp-Method") == "server/discover")
}

// count returns the SDK sessions of a server.
func (sv *server) count() int {
	n := 0
	for range sv.sdk.Sessions() {
		n++
	}
	return n
}

// authorized compares the bearer token in constant time.
func (h *httpHandler) authorized(header string) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], h.token) == 1
}

// hostAllowed accepts loopback names and AllowedHosts.
func (h *httpHandler) hostAllowed(host string) bool {
	if slices.Contains(h.o.AllowedHosts, host) {
		return true
	}
	name := host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		name = hn
	}
	return slices.Contains(h.o.AllowedHosts, name) || isLoopbackName(name)
}

// originAllowed accepts loopback origins and AllowedOrigins.
func (h *httpHandler) originAllowed(origin string) bool {
	if slices.Contains(h.o.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackName(u.Hostname())
}

// isLoopbackName reports whether a host name (no port) is loopback.
func isLoopbackName(name string) bool {
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.IsLoopback()
}

// ListenAndServe serves Handler(opts) at EndpointPath on addr (host:port; port 0 picks a
// free one) until ctx ends, then lets running calls finish for
// ShutdownGrace, closes the connections and the server (ending every
// session). ready, when set, is called with the address listened on
// once connections are accepted. An address other than loopback needs
// a token.
func (s *Server) ListenAndServe(ctx context.Context, addr string, opts *HTTPOptions, ready func(net.Addr)) error {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if err := CheckListenAddr(addr, o.Token); err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: listen on %s: %w", addr, err)
	}
	maxConns := o.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	ln = &limitListener{Listener: ln, slots: make(chan struct{}, maxConns)}
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, s.Handler(&o))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		MaxHeaderBytes: 64 << 10, BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-served:
		return errors.Join(fmt.Errorf("mcp: serving %s: %w", addr, err), s.Close())
	case <-ctx.Done():
	}
	grace := o.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	// New connections stop at once; calls that run may finish within the
	// grace. Shutdown alone would also wait out idle event streams.
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	deadline := time.Now().Add(grace)
	for s.sessions.running() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	err = srv.Close()
	<-shut
	return errors.Join(err, s.Close())
}

// CheckListenAddr refuses to serve a non-loopback address without a
// token: anyone who can reach it could run commands and read skills.
func CheckListenAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcp: address %q: %w; give HOST:PORT, e.g. 127.0.0.1:8080", addr, err)
	}
	if isLoopbackName(host) || token != "" {
		return nil
	}
	return fmt.Errorf("mcp: address %q is not loopback, and no token is set: anyone who can reach it could use the server; set a token (--token or $SKILLKIT_TOKEN) or listen on 127.0.0.1", addr)
}

// limitListener keeps at most cap(slots) connections open; one more is
// told so (503) and closed at once rather than left waiting in the
// backlog.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

// tooBusy is the whole answer to a connection over the limit.
const tooBusy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 44\r\n\r\nToo many connections; try again in a while.\n"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			go func() {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = io.WriteString(c, tooBusy)
				_ = c.Close()
			}()
		}
	}
}

// slotConn gives its slot back once closed.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
