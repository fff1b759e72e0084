//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentFrames(t *testing.T) {
	var buf bytes.Buffer
	big := bytes.Repeat([]byte("x"), agentMaxFrame)
	for _, f := range []struct {
		typ     byte
		id      uint32
		payload []byte
	}{{frameHello, 0, []byte(`{"proto":1}`)}, {frameStdin, 7, nil}, {frameStdout, 1<<32 - 1, big}} {
		if err := writeFrame(&buf, f.typ, f.id, f.payload); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	for _, want := range []struct {
		typ byte
		id  uint32
		n   int
	}{{frameHello, 0, 11}, {frameStdin, 7, 0}, {frameStdout, 1<<32 - 1, agentMaxFrame}} {
		typ, id, p, err := readFrame(r)
		if err != nil || typ != want.typ || id != want.id || len(p) != want.n {
			t.Errorf("got %q %d %d bytes %v, want %q %d %d", typ, id, len(p), err, want.typ, want.id, want.n)
		}
	}
	if _, _, _, err := readFrame(r); err != io.EOF {
		t.Errorf("at the end: %v, want EOF", err)
	}
	for name, b := range map[string][]byte{
		"one byte over the limit": append([]byte{0x00, 0x10, 0x00, 0x06}, make([]byte, 16)...),
		"shorter than a header":   {0, 0, 0, 4, 'O', 0, 0, 0},
		"cut in the header":       {0, 0, 0, 9, 'O', 0},
		"cut in the payload":      {0, 0, 0, 9, 'O', 0, 0, 0, 1, 'a'},
	} {
		_, _, _, err := readFrame(bufio.NewReader(bytes.NewReader(b)))
		if err == nil || err == io.EOF {
			t.Errorf("%s: %v, want an error", name, err)
		}
		if strings.HasPrefix(name, "cut") && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v, want unexpected EOF", name, err)
		}
	}
}

func FuzzAgentFrame(f *testing.F) {
	var buf bytes.Buffer
	_ = writeFrame(&buf, frameStart, 3, []byte(`{"args":["true"]}`))
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 5, 'X', 0, 0, 0, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			typ, id, p, err := readFrame(r)
			if err != nil {
				return
			}
			if len(p) > agentMaxFrame {
				t.Fatalf("a payload of %d bytes", len(p))
			}
			var again bytes.Buffer
			if err := writeFrame(&again, typ, id, p); err != nil {
				t.Fatal(err)
			}
			typ2, id2, p2, err := readFrame(bufio.NewReader(&again))
			if err != nil || typ2 != typ || id2 != id || !bytes.Equal(p2, p) {
				t.Fatalf("round trip: %q %d %q %v", typ2, id2, p2, err)
			}
		}
	})
}

func TestAgentFiles(t *testing.T) {
	t.Run("this binary", func(t *testing.T) {
		af, err := findAgentFiles()
		if err != nil {
			t.Fatal(err)
		}
		exe, _ := os.Executable()
		exe, _ = filepath.EvalSymlinks(exe)
		if af.mounts[0].Source != exe || af.mounts[0].Target != agentDir+"/"+agentArg0 || !af.mounts[0].ReadOnly {
			t.Errorf("first mount %+v", af.mounts[0])
		}
		if len(af.argv) == 1 && len(af.mounts) == 1 {
			return // built static (CGO_ENABLED=0): the binary alone
		}
		if n := len(af.argv); n < 4 || af.argv[n-1] != agentDir+"/"+agentArg0 || af.argv[1] != "--library-path" {
			t.Fatalf("argv %q", af.argv)
		}
		found := false
		for _, m := range af.mounts[1:] {
			if !m.ReadOnly || !strings.HasPrefix(m.Target, agentDir+"/lib/") {
				t.Errorf("mount %+v", m)
			}
			found = found || m.Target == af.argv[0]
		}
		if !found {
			t.Errorf("the loader %s is not mounted: %+v", af.argv[0], af.mounts)
		}
	})
	t.Run("a static binary", func(t *testing.T) {
		busybox := ""
		for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
			if _, err := os.Stat(p); err == nil {
				busybox = p
			}
		}
		if busybox == "" {
			t.Skip("needs a static busybox: apt-get install busybox-static (.ci/setup-podman installs it)")
		}
		af, err := agentFilesOf(busybox, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(af.mounts) != 1 || len(af.argv) != 1 || af.argv[0] != agentDir+"/"+agentArg0 {
			t.Errorf("%+v", af)
		}
	})
	t.Run("a path Podman cannot mount", func(t *testing.T) {
		af := &agentFiles{mounts: []ctrMount{{Source: "/opt/a,b/skillkit"}}}
		if err := af.mountable(true); err == nil || !strings.Contains(err.Error(), "comma") {
			t.Errorf("Podman: %v", err)
		}
		if err := af.mountable(false); err != nil {
			t.Errorf("Docker: %v", err)
		}
	})
	t.Run("a replaced library", func(t *testing.T) {
		exe, _ := os.Executable()
		maps := "7f00-7f10 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6 (deleted)\n"
		if _, err := agentFilesOf(exe, maps); err == nil || !strings.Contains(err.Error(), "replaced") {
			t.Errorf("%v", err)
		}
	})
}
