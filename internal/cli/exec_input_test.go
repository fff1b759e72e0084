package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/tools"
)

// runIO runs skillkit in the working directory cwd with stdin.
func runIO(ctx context.Context, cwd string, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Run(ctx, args, Env{Stdin: stdin, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: cwd})
	return out.String(), errb.String(), code
}

// inputHost makes a folder of host files for --input: data.csv, a file
// whose name holds '=', files of 10 and 11 bytes, a link, a FIFO and a
// folder.
func inputHost(t *testing.T) string {
	t.Helper()
	host := t.TempDir()
	for name, content := range map[string]string{"data.csv": "a,b\n", "a=b": "eq", "ten": "0123456789", "eleven": "0123456789a"} {
		writeTestFile(t, filepath.Join(host, name), content)
	}
	if err := os.Symlink("data.csv", filepath.Join(host, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(host, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(host, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	return host
}

// listInputs prints every file of work/inputs as ./PATH:CONTENT lines.
var listInputs = []string{"--", "sh", "-c", `cd "$WORK_DIR/inputs" && find . -type f | sort | while read -r f; do printf '%s:%s\n' "$f" "$(cat "$f")"; done`}

func TestExecInput(t *testing.T) {
	needIsolation(t)
	host := inputHost(t)
	for _, tc := range []struct {
		name   string
		flags  []string
		stdout string
		stderr string // the lines skillkit prints about the inputs
	}{
		{"default destination", []string{"--input", "data.csv"}, "./data.csv:a,b\n",
			"skillkit exec: input " + sandbox.WorkspaceDir + "/work/inputs/data.csv (4 bytes)\n"},
		{"destination in a folder", []string{"--input", "data.csv=in/d.csv"}, "./in/d.csv:a,b\n", ""},
		{"absolute path", []string{"--input", filepath.Join(host, "data.csv") + "=abs.csv"}, "./abs.csv:a,b\n", ""},
		{"the last '=' starts DEST", []string{"--input", "a=b=c"}, "./c:eq\n", ""},
		{"one file twice", []string{"--input", "data.csv", "--input", "data.csv=copy.csv"}, "./copy.csv:a,b\n./data.csv:a,b\n", ""},
		{"exactly --input-limit", []string{"--input-limit", "10", "--input", "ten"}, "./ten:0123456789\n",
			"skillkit exec: input " + sandbox.WorkspaceDir + "/work/inputs/ten (10 bytes)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runIO(context.Background(), host, nil, append(append([]string{"exec"}, tc.flags...), listInputs...)...)
			if code != 0 || out != tc.stdout || tc.stderr != "" && errOut != tc.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0, %q, %q", code, out, errOut, tc.stdout, tc.stderr)
			}
		})
	}
	// From a skill's folder the copy is inputs/DEST; --json prints no
	// input lines.
	out, errOut, code := runIO(context.Background(), host, nil, "exec", "--json", "--skill", "csv-stats", "--input", "data.csv",
		examples, "--", "cat", "inputs/data.csv")
	var res tools.ExecResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Stdout != "a,b\n" || errOut != "" {
		t.Errorf("from the skill: exit %d, stdout %q (%v), stderr %q", code, out, err, errOut)
	}
}

// TestExecInputKept copies inputs into a kept --workspace twice: the
// second run replaces the first one's copy; --local shows the command the
// host path.
func TestExecInputKept(t *testing.T) {
	host := inputHost(t)
	ws := filepath.Join(t.TempDir(), "ws")
	unmountAfter(t, ws)
	for _, tc := range []struct{ input, want string }{{"data.csv", "a,b\n"}, {"ten=data.csv", "0123456789"}} {
		out, errOut, code := runIO(context.Background(), host, nil, "exec", "--local", "--workspace", ws, "--input", tc.input, "--", "sh", "-c", `cat "$WORK_DIR/inputs/data.csv"`)
		line := "skillkit exec: input " + filepath.Join(ws, "work", "inputs", "data.csv") + fmt.Sprintf(" (%d bytes)\n", len(tc.want))
		if code != 0 || out != tc.want || !strings.Contains(errOut, line) {
			t.Errorf("--input %s: exit %d, stdout %q, stderr %q; want 0, %q and %q", tc.input, code, out, errOut, tc.want, line)
		}
	}
}

// TestExecInputRefused gives hostile and broken --input arguments: each is
// refused before the command runs, naming the argument, without hanging
// (a FIFO is never opened) and without creating the --workspace folder.
func TestExecInputRefused(t *testing.T) {
	host := inputHost(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"DEST with ..", []string{"--input", "data.csv=../x"}, `--input "data.csv=../x": workspace: path escapes its root: input destination "../x" contains ".."`},
		{"DEST with .. inside", []string{"--input", "data.csv=in/../../x"}, `input destination "in/../../x" contains ".."`},
		{"absolute DEST", []string{"--input", "data.csv=/etc/passwd"}, `--input "data.csv=/etc/passwd": workspace: path escapes its root: input destination "/etc/passwd" is absolute`},
		{"DEST is the inputs folder", []string{"--input", "data.csv=."}, `names work/inputs itself`},
		{"DEST ends with /", []string{"--input", "data.csv=in/"}, `input destination "in/" ends with '/'`},
		{"DEST with a backslash", []string{"--input", `data.csv=in\x`}, `contains a NUL or backslash`},
		{"trailing =", []string{"--input", "data.csv="}, `--input "data.csv=" ends with '='; put the destination after it, or drop the '='`},
		{"no PATH", []string{"--input", "=x"}, `--input "=x" names no file`},
		{"empty", []string{"--input", ""}, `--input "" names no file`},
		{"a=b=c without a=b", []string{"--input", "a=c=d"}, `--input "a=c=d": lstat ` + filepath.Join(host, "a=c") + `: no such file or directory (the last '=' starts the destination; for a file whose name holds '=', pass PATH=DEST)`},
		{"'=' in DEST", []string{"--input", "data.csv=x=y"}, `--input "data.csv=x=y": lstat ` + filepath.Join(host, "data.csv=x") + `: no such file or directory (the last '=' starts the destination`},
		{"name unfit as DEST", []string{"--input", "/"}, `--input "/": the file's name cannot be its destination`},
		{"duplicate DEST", []string{"--input", "data.csv", "--input", "ten=data.csv"}, `--input "data.csv" and --input "ten=data.csv" both go to work/inputs/data.csv; give one of them another destination`},
		{"duplicate after cleaning", []string{"--input", "data.csv=x", "--input", "ten=./x"}, `both go to work/inputs/x`},
		{"DEST inside another", []string{"--input", "ten=d/x", "--input", "data.csv=d"}, `--input "ten=d/x" goes to work/inputs/d/x, inside work/inputs/d, which --input "data.csv=d" makes a file`},
		{"symbolic link", []string{"--input", "link.csv"}, `--input "link.csv": ` + filepath.Join(host, "link.csv") + ` is a symbolic link, which --input does not follow; pass the file it leads to`},
		{"FIFO", []string{"--input", "fifo"}, `--input "fifo": ` + filepath.Join(host, "fifo") + ` is a FIFO, not a regular file`},
		{"device", []string{"--input", "/dev/null"}, `--input "/dev/null": /dev/null is a device, not a regular file`},
		{"directory", []string{"--input", "dir"}, `--input "dir": ` + filepath.Join(host, "dir") + ` is a directory; --input copies one regular file`},
		{"missing", []string{"--input", "nope.csv"}, `--input "nope.csv": lstat ` + filepath.Join(host, "nope.csv") + `: no such file or directory`},
		{"one byte over --input-limit", []string{"--input-limit", "10", "--input", "eleven"}, `--input "eleven": ` + filepath.Join(host, "eleven") + ` has 11 bytes, more than --input-limit 10; raise --input-limit (e.g. --input-limit 1MiB)`},
		{"the first of two over the limit", []string{"--input-limit", "1", "--input", "ten", "--input", "data.csv"}, `more than --input-limit 1; raise --input-limit`},
		{"zero --input-limit", []string{"--input-limit", "0", "--input", "ten"}, `--input-limit is 0; pass a positive size`},
		{"malformed --input-limit", []string{"--input-limit", "10MB", "--input", "ten"}, `"10MB" is not a size; pass bytes, or a whole number with KiB, MiB or GiB`},
		{"negative --stdin-limit", []string{"--stdin-limit", "-1"}, `"-1" is not a size`},
		{"huge --stdin-limit", []string{"--stdin-limit", "9999999999G"}, `"9999999999G" is too large`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			args := append(append([]string{"exec", "--workspace", ws}, tc.flags...), "--", "true")
			_, errOut, code := runIO(context.Background(), host, nil, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
			if _, err := os.Lstat(ws); !os.IsNotExist(err) {
				t.Errorf("--workspace %s was created (%v)", ws, err)
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		str  string
	}{
		{"0", 0, "0"}, {"10", 10, "10"}, {"10B", 10, "10"}, {"1024", 1024, "1KiB"}, {"3k", 3 << 10, "3KiB"},
		{"64MiB", 64 << 20, "64MiB"}, {"64m", 64 << 20, "64MiB"}, {"1536KiB", 1536 << 10, "1536KiB"}, {"2G", 2 << 30, "2GiB"}, {"1gib", 1 << 30, "1GiB"},
	} {
		var b byteSize
		if err := b.Set(tc.in); err != nil || int64(b) != tc.want || b.String() != tc.str {
			t.Errorf("Set(%q) = %d (%s), %v; want %d (%s)", tc.in, b, b.String(), err, tc.want, tc.str)
		}
	}
	for _, bad := range []string{"", "-1", "+1", "1.5M", "1 MiB", "MiB", "1MB", "1T", "0x10", "9223372036854775808", "8589934592G"} {
		var b byteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("Set(%q) = %d, want an error", bad, b)
		}
	}
}

func TestExecStdin(t *testing.T) {
	needIsolation(t)
	for _, tc := range []struct {
		name   string
		flags  []string
		stdin  string
		code   int
		stdout string
		stderr string
		left   int // bytes of stdin skillkit leaves unread
	}{
		{"forwarded", nil, "hello\n", 0, "hello\n", "", 0},
		{"bytes as they are", nil, "a\x00b\xff\r\n", 0, "a\x00b\xff\r\n", "", 0},
		{"empty", nil, "", 0, "", "", 0},
		{"exactly --stdin-limit", []string{"--stdin-limit", "5"}, "12345", 0, "12345", "", 0},
		{"one byte over --stdin-limit", []string{"--stdin-limit", "5"}, "123456", 2, "",
			"skillkit: exec: stdin holds more than --stdin-limit 5; raise --stdin-limit, or pass the data as a file with --input\n", 0},
		{"--stdin-limit 0 leaves it unread", []string{"--stdin-limit", "0"}, "unread", 0, "", "", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			unmountAfter(t, ws)
			in := strings.NewReader(tc.stdin)
			args := append(append([]string{"exec", "--workspace", ws}, tc.flags...), "--", "cat")
			out, errOut, code := runIO(context.Background(), t.TempDir(), in, args...)
			if code != tc.code || out != tc.stdout || errOut != tc.stderr || in.Len() != tc.left {
				t.Errorf("exit %d, stdout %q, stderr %q, %d bytes unread; want %d, %q, %q, %d", code, out, errOut, in.Len(), tc.code, tc.stdout, tc.stderr, tc.left)
			}
			if _, err := os.Lstat(ws); (err == nil) != (tc.code == 0) {
				t.Errorf("--workspace %s: %v; want it made only when the command ran", ws, err)
			}
		})
	}
	res, _, code := execJSON(t, "--", "cat") // run gives an empty stdin
	if code != 0 || res.Stdout != "" {
		t.Errorf("--json, empty stdin: exit %d, stdout %q", code, res.Stdout)
	}
}

// TestExecStdinInterrupted interrupts skillkit while it waits for a stdin
// that is never closed: it gives up instead of hanging.
func TestExecStdinInterrupted(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, errOut, code := runIO(ctx, t.TempDir(), r, "exec", "--local", "--", "true")
	if code != 2 || !strings.Contains(errOut, "exec: reading stdin: context canceled (pass --stdin-limit 0 to leave stdin unread)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
