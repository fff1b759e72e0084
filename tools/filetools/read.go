package filetools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/skillkit/skillkit/tools"
)

// readArgs are the arguments of read_file.
type readArgs struct {
	Path       string `json:"path" jsonschema:"The file, relative to the folder (for example notes/todo.md)."`
	OffsetLine int    `json:"offset_line,omitempty" jsonschema:"The first line to return, counting from 1 (default 1)."`
	MaxLines   int    `json:"max_lines,omitempty" jsonschema:"At most this many lines (default: to the end of the file)."`
}

func (s *fileSet) runRead(_ context.Context, a readArgs) (tools.Result, error) {
	if a.OffsetLine < 0 {
		return tools.Errorf("Error: offset_line is %d; lines count from 1, omit it to start at the first", a.OffsetLine), nil
	}
	if a.MaxLines < 0 {
		return tools.Errorf("Error: max_lines is %d; give a positive number, or omit it to read to the end", a.MaxLines), nil
	}
	p, bad := s.resolve("path", a.Path, false)
	if bad != nil {
		return *bad, nil
	}
	t, err := s.load(p)
	if err != nil {
		return s.fsError("path", a.Path, err), nil
	}
	q := strconv.Quote(a.Path)
	switch t.problem {
	case notRegular:
		if t.mode.IsDir() {
			return tools.Errorf("Error: path %s is a folder; list it with %s", q, s.tool(ListFilesName)), nil
		}
		return tools.Errorf("Error: path %s is not a regular file (%s); only regular files are read", q, typeName(t.mode)), nil
	case tooLarge:
		return tools.Errorf("Error: path %s is %d bytes, over the limit of %d bytes for %s; find what you need with %s instead", q, t.size, s.maxRead, s.tool(ReadFileName), s.tool(GrepName)), nil
	case binary:
		return tools.Errorf("Error: path %s is a binary file (%s, %d bytes); %s returns text only", q, t.mime, t.size, s.tool(ReadFileName)), nil
	}
	return window(a, t.data), nil
}

// window returns the lines of data that a asks for, with a note saying
// which lines they are when that is not the whole file.
func window(a readArgs, data []byte) tools.Result {
	if len(data) == 0 {
		return tools.Result{Text: "[the file is empty]"}
	}
	starts := []int{0} // byte offset of each line
	for i, b := range data[:len(data)-1] {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	total := len(starts)
	first := max(a.OffsetLine, 1)
	if first > total {
		return tools.Errorf("Error: offset_line is %d, past the end of %s, which has %d lines", a.OffsetLine, strconv.Quote(a.Path), total)
	}
	last := total
	if a.MaxLines > 0 {
		last = min(total, first+a.MaxLines-1)
	}
	end := len(data)
	if last < total {
		end = starts[last]
	}
	text := strings.ToValidUTF8(string(data[starts[first-1]:end]), "\uFFFD")
	if first == 1 && last == total {
		return tools.Result{Text: text}
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	note := fmt.Sprintf("[lines %d-%d of %d", first, last, total)
	if last < total {
		note += fmt.Sprintf("; %d more: read on with offset_line %d", total-last, last+1)
	}
	return tools.Result{Text: text + note + "]"}
}

// Why a file was not read.
const (
	readable   = iota
	notRegular // a folder, FIFO, device, socket
	tooLarge   // over MaxReadBytes
	binary     // not text
)

// loaded is one file as load found it.
type loaded struct {
	data    []byte // the content, when problem is readable
	size    int64
	mode    fs.FileMode
	mime    string // for binary files
	problem int
}

// load opens p beneath the root once (open), checks the opened file (a
// regular file within MaxReadBytes) and reads it. A
// file that grows past the limit while it is read is too large too.
func (s *fileSet) load(p string) (loaded, error) {
	f, fi, err := open(s.root, p)
	if err != nil {
		return loaded{}, err
	}
	defer f.Close()
	t := loaded{size: fi.Size(), mode: fi.Mode()}
	switch {
	case !fi.Mode().IsRegular():
		t.problem = notRegular
		return t, nil
	case fi.Size() > s.maxRead:
		t.problem = tooLarge
		return t, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()))
	if _, err := buf.ReadFrom(io.LimitReader(f, s.maxRead+1)); err != nil {
		return loaded{}, err
	}
	t.data, t.size = buf.Bytes(), max(t.size, int64(buf.Len()))
	if int64(len(t.data)) > s.maxRead {
		t.data, t.problem = nil, tooLarge
		return t, nil
	}
	if ok, mt := isText(t.data); !ok {
		t.data, t.mime, t.problem = nil, mt, binary
	}
	return t, nil
}

// open opens p beneath r for reading, once: without blocking (a FIFO
// cannot hang the open) and without making a terminal the controlling
// one. It returns the file with fstat of its descriptor, which callers
// check before they read, so what is checked is what is read.
func open(r *os.Root, p string) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(p, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// typeName names a file type that is neither a regular file nor a folder.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}
