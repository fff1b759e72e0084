package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// engine is a client of the Docker Engine API over a unix socket, written
// on net/http: the official client (github.com/moby/moby/client) brings
// dozens of modules for the few calls needed here, and Podman serves the
// same API, so one small client covers both engines.
type engine struct {
	socket string
	hc     *http.Client
}

// newEngine returns a client of the engine listening on socket.
func newEngine(socket string) *engine {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
	}
	return &engine{socket: socket, hc: &http.Client{Transport: tr}}
}

// engineError is a non-2xx answer of the engine.
type engineError struct {
	status  int
	message string
}

// Error implements error.
func (e *engineError) Error() string {
	return fmt.Sprintf("status %d: %s", e.status, e.message)
}

// call sends one request; in (if not nil) is sent as JSON and a 2xx
// answer is decoded into out (if not nil). Other answers are an
// *engineError wrapped with ErrContainerEngine and what was asked.
func (e *engine) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%w: encode %s %s: %w", ErrContainerEngine, method, path, err)
		}
		body = bytes.NewReader(b)
	}
	u := "http://engine/" + ContainerAPIVersion + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %w", ErrContainerEngine, method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s on %s: %w", ErrContainerEngine, method, path, e.socket, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%w: %s %s: read the answer: %w", ErrContainerEngine, method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: %s %s: %w", ErrContainerEngine, method, path, &engineError{status: resp.StatusCode, message: engineMessage(b)})
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%w: %s %s: decode %q: %w", ErrContainerEngine, method, path, truncate(b, 200), err)
		}
	}
	return nil
}

// engineMessage extracts the message of an error answer.
func engineMessage(b []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &m) == nil && m.Message != "" {
		return m.Message
	}
	return strings.TrimSpace(string(truncate(b, 500)))
}

// truncate returns at most n bytes of b.
func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// engineStatus returns the HTTP status of an engine error, or 0.
func engineStatus(err error) int {
	var ee *engineError
	if errors.As(err, &ee) {
		return ee.status
	}
	return 0
}

// hijacked is the raw stream of a started exec: the engine's multiplexed
// stdout and stderr frames to read, the command's stdin to write.
type hijacked struct {
	conn *net.UnixConn
	r    *bufio.Reader
}

// startExec starts the exec id and takes over the connection for its
// streams (POST /exec/{id}/start with an Upgrade, as `docker exec`
// does). net/http's client cannot half-close an upgraded connection,
// which is how the command's stdin gets its end of file, so the request
// is written on a connection of our own and only the answer is parsed by
// net/http.
func (e *engine) startExec(ctx context.Context, id string) (*hijacked, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", e.socket)
	if err != nil {
		return nil, fmt.Errorf("%w: start exec: %w", ErrContainerEngine, err)
	}
	conn := c.(*net.UnixConn)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	body := `{"Detach":false,"Tty":false}`
	req := "POST /" + ContainerAPIVersion + "/exec/" + url.PathEscape(id) + "/start HTTP/1.1\r\n" +
		"Host: engine\r\nContent-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: start exec: %w", ErrContainerEngine, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: start exec: %w", ErrContainerEngine, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		conn.Close()
		return nil, fmt.Errorf("%w: start exec: %w", ErrContainerEngine, &engineError{status: resp.StatusCode, message: engineMessage(b)})
	}
	if !stop() {
		conn.Close()
		return nil, ctx.Err()
	}
	return &hijacked{conn: conn, r: br}, nil
}

// demux copies the multiplexed frames to stdout and stderr until the
// stream ends. Frames of the engine's own stream (3) go to stderr.
func (h *hijacked) demux(stdout, stderr io.Writer) error {
	_, err := io.CopyBuffer(stdout, &stdoutReader{r: h.r, other: stderr}, make([]byte, 32<<10))
	return err
}

// stdoutReader reads the stdout frames of the engine's multiplexed stream
// (an 8-byte header: stream, three zero bytes, big-endian length), and
// copies the frames of the other streams to other.
type stdoutReader struct {
	r     *bufio.Reader
	other io.Writer
	left  int // bytes left in the current stdout frame
}

// Read implements io.Reader.
func (s *stdoutReader) Read(p []byte) (int, error) {
	for s.left == 0 {
		var hdr [8]byte
		if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
			return 0, err
		}
		n := int(binary.BigEndian.Uint32(hdr[4:]))
		if hdr[0] == 1 {
			s.left = n
			continue
		}
		if _, err := io.CopyN(s.other, s.r, int64(n)); err != nil {
			return 0, noEOF(err)
		}
	}
	n, err := s.r.Read(p[:min(len(p), s.left)])
	s.left -= n
	return n, noEOF(err)
}

// noEOF turns an end of file inside a frame into an unexpected one.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// The engine's JSON shapes (only the fields used).
type (
	ctrCreate struct {
		Image           string            `json:"Image"`
		Entrypoint      []string          `json:"Entrypoint"`
		Cmd             []string          `json:"Cmd"`
		User            string            `json:"User"`
		WorkingDir      string            `json:"WorkingDir"`
		Env             []string          `json:"Env"`
		Labels          map[string]string `json:"Labels"`
		NetworkDisabled bool              `json:"NetworkDisabled,omitempty"`
		HostConfig      ctrHostConfig     `json:"HostConfig"`
	}
	ctrHostConfig struct {
		NetworkMode    string            `json:"NetworkMode,omitempty"`
		ReadonlyRootfs bool              `json:"ReadonlyRootfs"`
		Mounts         []ctrMount        `json:"Mounts"`
		Tmpfs          map[string]string `json:"Tmpfs,omitempty"`
		Memory         int64             `json:"Memory"`
		MemorySwap     int64             `json:"MemorySwap"`
		PidsLimit      int64             `json:"PidsLimit"`
		NanoCpus       int64             `json:"NanoCpus,omitempty"`
		SecurityOpt    []string          `json:"SecurityOpt"`
		CapDrop        []string          `json:"CapDrop"`
		Ulimits        []ctrUlimit       `json:"Ulimits"`
		Init           bool              `json:"Init"`
		IpcMode        string            `json:"IpcMode,omitempty"`
	}
	ctrMount struct {
		Type     string `json:"Type"`
		Source   string `json:"Source,omitempty"`
		Target   string `json:"Target"`
		ReadOnly bool   `json:"ReadOnly,omitempty"`
	}
	ctrUlimit struct {
		Name string `json:"Name"`
		Soft int64  `json:"Soft"`
		Hard int64  `json:"Hard"`
	}
	ctrInspect struct {
		ID    string `json:"Id"`
		State struct {
			Running   bool `json:"Running"`
			OOMKilled bool `json:"OOMKilled"`
			Pid       int  `json:"Pid"`
		} `json:"State"`
	}
	execCreate struct {
		AttachStdin  bool     `json:"AttachStdin"`
		AttachStdout bool     `json:"AttachStdout"`
		AttachStderr bool     `json:"AttachStderr"`
		Tty          bool     `json:"Tty"`
		Env          []string `json:"Env"`
		WorkingDir   string   `json:"WorkingDir"`
		User         string   `json:"User"`
		Cmd          []string `json:"Cmd"`
	}
	execInspect struct {
		Running  bool `json:"Running"`
		ExitCode int  `json:"ExitCode"`
		Pid      int  `json:"Pid"`
	}
	idAnswer struct {
		ID string `json:"Id"`
	}
	ctrListed struct {
		ID     string            `json:"Id"`
		Labels map[string]string `json:"Labels"`
	}
)
