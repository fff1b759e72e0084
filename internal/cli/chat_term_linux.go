package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/internal/termtext"
)

// terminalInput reads chat's lines from a terminal in raw mode, with the
// line editor of lineedit.go. A goroutine reads the terminal for the whole
// chat, so that Ctrl-C is seen during a turn too (the terminal sends it
// as a byte: raw mode turns its signal off).
type terminalInput struct {
	fd int
	// out is where the prompt and the line are drawn: the terminal
	// itself, whatever stdout is.
	out      *os.File
	closeOut bool
	saved    *unix.Termios
	// names gives what Tab completes.
	names func() (commands, skills []string)

	keys       chan []byte // what the reader read, in order
	stop       chan struct{}
	wakeR      *os.File // readable once wakeW is closed: the reader ends
	wakeW      *os.File
	wakeFd     int
	readerDone chan struct{}
	sigs       chan os.Signal
	sigDone    chan struct{}
	restored   sync.Once
	closed     sync.Once

	// pending is what was read and not yet taken as keys: typed ahead,
	// or the start of a key.
	pending []byte
	// eof reports that the terminal has nothing more to read.
	eof bool
}

// openTerminalInput puts the terminal r is in raw mode and returns its
// input, or nil when r is not a terminal. A hang-up or termination signal
// restores the terminal and calls end.
func openTerminalInput(r io.Reader, end func(), names func() (commands, skills []string)) (lineInput, error) {
	f, ok := r.(*os.File)
	if !ok || !termtext.IsTerminal(f.Fd()) {
		return nil, nil
	}
	t := &terminalInput{fd: int(f.Fd()), out: f, names: names}
	saved, err := unix.IoctlGetTermios(t.fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t.saved = saved
	if flags, err := unix.FcntlInt(uintptr(t.fd), unix.F_GETFL, 0); err == nil && flags&unix.O_ACCMODE == unix.O_RDONLY {
		// A read-only stdin cannot show the line; the controlling
		// terminal can.
		if t.out, err = os.OpenFile("/dev/tty", os.O_WRONLY, 0); err != nil {
			return nil, fmt.Errorf("stdin is a read-only terminal and /dev/tty cannot be opened to show the line: %w", err)
		}
		t.closeOut = true
	}
	if t.wakeR, t.wakeW, err = os.Pipe(); err != nil {
		t.closeFiles()
		return nil, err
	}
	t.wakeFd = int(t.wakeR.Fd())
	raw := *saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	// Output processing stays as it was, so the transcript's lines end
	// as on a terminal in its usual mode.
	if err := unix.IoctlSetTermios(t.fd, unix.TCSETS, &raw); err != nil {
		t.closeFiles()
		return nil, err
	}
	t.keys, t.stop, t.readerDone = make(chan []byte), make(chan struct{}), make(chan struct{})
	t.sigs, t.sigDone = make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(t.sigs, unix.SIGHUP, unix.SIGTERM)
	go t.watchSignals(end)
	go t.read()
	return t, nil
}

// restore puts the terminal back in the mode it was found in.
func (t *terminalInput) restore() {
	t.restored.Do(func() { _ = unix.IoctlSetTermios(t.fd, unix.TCSETS, t.saved) })
}

// watchSignals restores the terminal at once when the process is told to
// end, then ends the chat.
func (t *terminalInput) watchSignals(end func()) {
	defer close(t.sigDone)
	select {
	case <-t.sigs:
		t.restore()
		end()
	case <-t.stop:
	}
}

// read hands over what the terminal sends until it has nothing more or
// the input is closed.
func (t *terminalInput) read() {
	defer close(t.readerDone)
	defer close(t.keys)
	buf := make([]byte, 4096)
	for {
		fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}, {Fd: int32(t.wakeFd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err == unix.EINTR {
			continue
		} else if err != nil || fds[1].Revents != 0 {
			return
		}
		n, err := unix.Read(t.fd, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		select {
		case t.keys <- slices.Clone(buf[:n]):
		case <-t.stop:
			return
		}
	}
}

func (t *terminalInput) readLine(ctx context.Context, intr <-chan struct{}) (string, error) {
	var s editState
	t.draw(s)
	for {
		for len(t.pending) > 0 {
			k, n := decodeKey(t.pending)
			if n == 0 {
				break
			}
			t.pending = t.pending[n:]
			next, act := editLine(s, k)
			switch act {
			case actRedraw:
				s = next
				t.draw(s)
			case actSubmit:
				t.write("\r\n")
				return s.String(), nil
			case actEOF:
				t.write("\r\n")
				return "", io.EOF
			case actQuit:
				t.write("^C\r\n")
				return "", errQuit
			case actCancel:
				t.write("^C\r\n")
				s = next
				t.draw(s)
			case actComplete:
				commands, skills := t.names()
				done, matches := completeWord(s, commands, skills)
				if len(matches) > 0 {
					t.write("\r\n/" + termtext.Escape(strings.Join(matches, "  /")) + "\r\n")
				}
				s = done
				t.draw(s)
			}
		}
		if t.eof {
			t.write("\r\n")
			return "", io.EOF
		}
		select {
		case b, ok := <-t.keys:
			if !ok {
				t.eof = true
				continue
			}
			t.pending = append(t.pending, b...)
		case <-intr:
			t.write("\r\n")
			return "", errQuit
		case <-ctx.Done():
			t.write("\r\n")
			return "", ctx.Err()
		}
	}
}

// draw shows the prompt and the line, the cursor where it is.
func (t *terminalInput) draw(s editState) {
	var b strings.Builder
	// Back to the line's start, the line, the rest of the screen line
	// cleared, then the cursor moved back from the end.
	b.WriteString("\r" + chatPrompt + termtext.Escape(s.String()) + "\x1b[K")
	if back := len(s.buf) - s.cursor; back > 0 {
		fmt.Fprintf(&b, "\x1b[%dD", back)
	}
	t.write(b.String())
}

func (t *terminalInput) write(s string) {
	_, _ = io.WriteString(t.out, s) // a terminal that is gone shows nothing
}

func (t *terminalInput) duringTurn(cancel func()) func() {
	// A Ctrl-C typed before the turn started is for it.
	if i := bytes.LastIndexByte(t.pending, 0x03); i >= 0 {
		cancel()
		t.pending = slices.Clone(t.pending[i+1:])
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case b, ok := <-t.keys:
				if !ok {
					t.eof = true
					return
				}
				// What was typed before the Ctrl-C goes with the turn
				// it stops.
				if i := bytes.LastIndexByte(b, 0x03); i >= 0 {
					cancel()
					t.pending, b = nil, b[i+1:]
				}
				t.pending = append(t.pending, b...)
			case <-stop:
				return
			}
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}

func (t *terminalInput) close() {
	t.closed.Do(func() {
		close(t.stop)
		_ = t.wakeW.Close()
		<-t.readerDone
		signal.Stop(t.sigs)
		<-t.sigDone
		t.restore()
		t.closeFiles()
	})
}

// closeFiles closes what openTerminalInput opened.
func (t *terminalInput) closeFiles() {
	for _, f := range []*os.File{t.wakeR, t.wakeW} {
		if f != nil {
			_ = f.Close()
		}
	}
	if t.closeOut {
		_ = t.out.Close()
	}
}
