//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The container agent is this binary run inside a workspace's container
// (one engine exec per container), with argv[0] ending in agentArg0 and
// agentEnv=1; both must match, so a stray variable alone never diverts a
// normal program. It starts the commands the host sends it and reports
// their output and end, so a command costs a message instead of an
// engine exec. It runs with everything the engine gives an exec in that
// container (user, no capabilities, seccomp, cgroups, namespaces), and
// so does every command it starts.
const (
	agentArg0 = "skillkit-agent"
	agentEnv  = "SKILLKIT_SANDBOX_AGENT"
	// agentProto is the version of the frames below; the host refuses
	// an agent that answers another (a replica of another build).
	agentProto = 1
	// agentTasks is the number of threads the agent makes for itself at
	// start, so that it needs no new one while a command fills the
	// container's pids bound; they are added to that bound.
	agentTasks = 8
	// agentMaxFrame bounds a frame either side reads.
	agentMaxFrame = 1 << 20
	// agentChunk is the largest stdin or output chunk a frame carries.
	agentChunk = 32 << 10
)

// Frame types. A frame is a 4-byte big-endian length of what follows,
// then a type byte, a 4-byte command id and the payload.
const (
	frameHello   = 'H' // agent: agentHello
	frameStart   = 'S' // host: agentStart
	frameStarted = 'R' // agent: agentStarted
	frameStdin   = 'I' // host: bytes for the command's stdin
	frameAck     = 'A' // agent: the stdin bytes are written (payload 0) or the stdin is gone (1)
	frameClose   = 'C' // host: close the command's stdin
	frameSignal  = 'K' // host: one byte, a signal for the command's process group
	frameStdout  = 'O' // agent: output
	frameStderr  = 'E' // agent: output
	frameExit    = 'X' // agent: agentExit, after the last output frame
)

type (
	agentHello struct {
		Proto   int `json:"proto"`
		Threads int `json:"threads"`
	}
	agentStart struct {
		Args  []string `json:"args"`
		Env   []string `json:"env"`
		Dir   string   `json:"dir"`
		Stdin bool     `json:"stdin"`
		// Drain is how long the output is still read once the command
		// has ended, for what it wrote last, when a process it left
		// keeps the output open.
		Drain time.Duration `json:"drain"`
	}
	agentStarted struct {
		Pid      int    `json:"pid,omitempty"`
		Err      string `json:"err,omitempty"`
		NotFound bool   `json:"not_found,omitempty"`
	}
	agentExit struct {
		Exit   int `json:"exit"`
		Signal int `json:"signal,omitempty"`
	}
)

// writeFrame writes one frame in a single write.
func writeFrame(w io.Writer, typ byte, id uint32, payload []byte) error {
	b := make([]byte, 9, 9+len(payload))
	binary.BigEndian.PutUint32(b, uint32(5+len(payload)))
	b[4] = typ
	binary.BigEndian.PutUint32(b[5:], id)
	_, err := w.Write(append(b, payload...))
	return err
}

// readFrame reads one frame, refusing one longer than agentMaxFrame.
func readFrame(r *bufio.Reader) (typ byte, id uint32, payload []byte, err error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:4]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n < 5 || n > agentMaxFrame+5 {
		return 0, 0, nil, fmt.Errorf("a frame of %d bytes", n)
	}
	if _, err := io.ReadFull(r, hdr[4:9]); err != nil {
		return 0, 0, nil, noEOF(err)
	}
	payload = make([]byte, n-5)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, 0, nil, noEOF(err)
	}
	return hdr[4], binary.BigEndian.Uint32(hdr[5:9]), payload, nil
}

func init() {
	if len(os.Args) == 0 || os.Getenv(agentEnv) != "1" || filepath.Base(os.Args[0]) != agentArg0 {
		return
	}
	os.Exit(agentMain())
}

// agent is the state of the agent process.
type agent struct {
	out   *os.File
	outMu sync.Mutex
	// oomAdj is this process's oom_score_adj, opened while it could be
	// (before the process turned undumpable), and oomBase its value:
	// each command starts at 1000, so that the kernel, short of memory,
	// kills commands before the agent.
	oomAdj  *os.File
	oomBase []byte

	mu    sync.Mutex
	procs map[int]*agentProc // by pid
	byID  map[uint32]*agentProc
}

// agentProc is one command the agent started.
type agentProc struct {
	id     uint32
	pid    int
	drain  time.Duration
	stdin  *os.File // nil when not attached
	exited chan syscall.WaitStatus

	inMu     sync.Mutex
	inq      chan []byte
	inClosed bool
}

// push queues stdin bytes for feed; false when the stdin is closed.
func (p *agentProc) push(b []byte) bool {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inClosed {
		return false
	}
	select {
	case p.inq <- b:
		return true
	default:
		// The host waits for each acknowledgement: never here.
		return false
	}
}

// closeIn ends the stdin queue (feed closes the pipe once it is written).
func (p *agentProc) closeIn() {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if !p.inClosed {
		p.inClosed = true
		close(p.inq)
	}
}

// agentMain serves the host on stdin and stdout until stdin ends.
func agentMain() int {
	// Not os.NewFile(1) yet: a second *os.File of one descriptor would
	// close it when collected.
	a := &agent{procs: map[int]*agentProc{}, byID: map[uint32]*agentProc{}}
	if b, err := os.ReadFile("/proc/self/oom_score_adj"); err == nil {
		if f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_WRONLY, 0); err == nil {
			a.oomAdj, a.oomBase = f, bytes.TrimSpace(b)
		}
	}
	// The commands run as the same user: they must not trace the agent
	// or read its memory.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// Caught, not ignored: an ignored signal stays ignored in the
	// commands, and a shell cannot even trap it.
	stray := make(chan os.Signal, 4)
	signal.Notify(stray, syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for range stray {
		}
	}()
	reserveThreads(agentTasks)
	// Pollable stdin and stdout: a read or write waiting on the host
	// holds no thread.
	_ = syscall.SetNonblock(0, true)
	_ = syscall.SetNonblock(1, true)
	in := bufio.NewReaderSize(os.NewFile(0, "stdin"), 64<<10)
	a.out = os.NewFile(1, "stdout")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	go a.reap(sigs)
	hello, _ := json.Marshal(agentHello{Proto: agentProto, Threads: threadCount()})
	if a.send(frameHello, 0, hello) != nil {
		return 1
	}
	for {
		typ, id, payload, err := readFrame(in)
		if err != nil {
			// The host is gone: so is everything it started.
			a.mu.Lock()
			for pid := range a.procs {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
			a.mu.Unlock()
			if err == io.EOF {
				return 0
			}
			fmt.Fprintf(os.Stderr, "skillkit-agent: %v\n", err)
			return 1
		}
		switch typ {
		case frameStart:
			a.start(id, payload)
		case frameStdin, frameClose:
			a.mu.Lock()
			p := a.byID[id]
			a.mu.Unlock()
			switch {
			case typ == frameClose:
				if p != nil && p.stdin != nil {
					p.closeIn()
				}
			case p == nil || p.stdin == nil || !p.push(payload):
				_ = a.send(frameAck, id, []byte{1})
			}
		case frameSignal:
			a.mu.Lock()
			p := a.byID[id]
			a.mu.Unlock()
			if p != nil && len(payload) == 1 {
				_ = syscall.Kill(-p.pid, syscall.Signal(payload[0]))
			}
		}
	}
}

// send writes one frame to the host.
func (a *agent) send(typ byte, id uint32, payload []byte) error {
	a.outMu.Lock()
	defer a.outMu.Unlock()
	return writeFrame(a.out, typ, id, payload)
}

// start starts the command of a start frame and answers with its pid or
// why it could not start.
func (a *agent) start(id uint32, payload []byte) {
	answer := func(st agentStarted) {
		b, _ := json.Marshal(st)
		_ = a.send(frameStarted, id, b)
	}
	var req agentStart
	if err := json.Unmarshal(payload, &req); err != nil || len(req.Args) == 0 {
		answer(agentStarted{Err: fmt.Sprintf("a start request that cannot be read: %v", err)})
		return
	}
	path, err := lookPath(req.Args[0], req.Env)
	if err != nil {
		answer(agentStarted{Err: err.Error(), NotFound: true})
		return
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		answer(agentStarted{Err: err.Error()})
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		answer(agentStarted{Err: err.Error()})
		return
	}
	var inR, inW *os.File
	if req.Stdin {
		inR, inW, err = os.Pipe()
	} else {
		inR, err = os.Open(os.DevNull)
	}
	if err != nil {
		for _, f := range []*os.File{outR, outW, errR, errW} {
			f.Close()
		}
		answer(agentStarted{Err: err.Error()})
		return
	}
	p := &agentProc{id: id, drain: req.Drain, stdin: inW, inq: make(chan []byte, 4), exited: make(chan syscall.WaitStatus, 1)}
	// Under the lock, so that the reaper cannot take the command's end
	// before it is known here.
	a.mu.Lock()
	if a.oomAdj != nil {
		// Raising the score needs no privilege, nor does lowering it
		// back to where it was.
		_, _ = unix.Pwrite(int(a.oomAdj.Fd()), []byte("1000"), 0)
	}
	pid, err := syscall.ForkExec(path, req.Args, &syscall.ProcAttr{
		Dir:   req.Dir,
		Env:   req.Env,
		Files: []uintptr{inR.Fd(), outW.Fd(), errW.Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if a.oomAdj != nil {
		_, _ = unix.Pwrite(int(a.oomAdj.Fd()), a.oomBase, 0)
	}
	if err == nil {
		p.pid = pid
		a.procs[pid] = p
		a.byID[id] = p
	}
	a.mu.Unlock()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		answer(agentStarted{Err: fmt.Sprintf("%s: %v", req.Args[0], err), NotFound: errors.Is(err, syscall.ENOENT)})
		return
	}
	answer(agentStarted{Pid: pid})
	if inW != nil {
		go a.feed(p)
	}
	go a.follow(p, outR, errR)
}

// feed writes the stdin chunks of p, acknowledging each, until the host
// closes the stdin.
func (a *agent) feed(p *agentProc) {
	broken := false
	for b := range p.inq {
		if !broken {
			if _, err := p.stdin.Write(b); err != nil {
				broken = true
				p.stdin.Close()
			}
		}
		ack := byte(0)
		if broken {
			ack = 1
		}
		_ = a.send(frameAck, p.id, []byte{ack})
	}
	if !broken {
		p.stdin.Close()
	}
}

// follow forwards the output of p until it ends, then reports its end.
func (a *agent) follow(p *agentProc, outR, errR *os.File) {
	var wg sync.WaitGroup
	for _, s := range []struct {
		f   *os.File
		typ byte
	}{{outR, frameStdout}, {errR, frameStderr}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, agentChunk)
			for {
				n, err := s.f.Read(buf)
				if n > 0 && a.send(s.typ, p.id, buf[:n]) != nil {
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	drained := make(chan struct{})
	go func() {
		wg.Wait()
		close(drained)
	}()
	ws := <-p.exited
	t := time.NewTimer(p.drain)
	select {
	case <-drained:
	case <-t.C:
		// A process the command left holds its output open: what it
		// writes from now on is not the command's.
		outR.Close()
		errR.Close()
		<-drained
	}
	t.Stop()
	outR.Close()
	errR.Close()
	a.mu.Lock()
	delete(a.byID, p.id)
	a.mu.Unlock()
	if p.stdin != nil {
		p.closeIn()
	}
	st := agentExit{Exit: ws.ExitStatus()}
	if ws.Signaled() {
		st.Signal = int(ws.Signal())
		st.Exit = 128 + st.Signal
	}
	b, _ := json.Marshal(st)
	_ = a.send(frameExit, p.id, b)
}

// reap collects the ends of the agent's children at each SIGCHLD.
func (a *agent) reap(sigs <-chan os.Signal) {
	for range sigs {
		a.mu.Lock()
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			if p := a.procs[pid]; p != nil {
				delete(a.procs, pid)
				p.exited <- ws
			}
		}
		a.mu.Unlock()
	}
}

// reserveThreads makes the Go runtime start threads until the process has
// n, then leaves them idle for later use: a runtime that needs a thread
// while the pids cgroup is full dies. Each goroutine that locks a thread
// holds it, so the count grows by at most one per goroutine.
func reserveThreads(n int) {
	release := make(chan struct{})
	defer close(release)
	for i := 0; i < 4*n && threadCount() < n; i++ {
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			<-release
			runtime.UnlockOSThread()
		}()
		<-locked
	}
}

// threadCount returns the number of threads of this process, or 0.
func threadCount() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
