package filetools

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/skillkit/skillkit/tools"
)

// grepArgs are the arguments of grep.
type grepArgs struct {
	Pattern    string `json:"pattern" jsonschema:"A regular expression in Go (RE2) syntax, matched against each line."`
	PathGlob   string `json:"path_glob,omitempty" jsonschema:"Search only the files matching this glob, relative to the folder (default ** : every file)."`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"Match letters regardless of case."`
}

// errEnough ends the walk once grep has one match more than it shows.
var errEnough = errors.New("enough matches")

func (s *fileSet) runGrep(ctx context.Context, a grepArgs) (tools.Result, error) {
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return tools.Errorf("Error: pattern %s is not a valid regular expression (Go RE2 syntax): %v", strconv.Quote(a.Pattern), unwrapSyntax(err)), nil
	}
	glob := cmp.Or(a.PathGlob, "**")
	pat, bad := s.pattern("path_glob", glob)
	if bad != nil {
		return *bad, nil
	}
	var (
		matches                                 []string
		more                                    bool
		skippedBinary, skippedLarge, unreadable int
	)
	err = s.walk(ctx, pat, func(p string, _ fs.DirEntry) error {
		t, err := s.load(p)
		switch {
		case err != nil:
			unreadable++
			return nil
		case t.problem == tooLarge:
			skippedLarge++
			return nil
		case t.problem == binary:
			skippedBinary++
			return nil
		case t.problem != readable:
			return nil // a folder reached through a link, a FIFO, a device
		}
		for n, line := range lines(t.data) {
			if !re.Match(line) {
				continue
			}
			if len(matches) == s.maxMatches {
				more = true
				return errEnough
			}
			matches = append(matches, fmt.Sprintf("%s:%d: %s", p, n, clip(line)))
		}
		return nil
	}, doublestar.WithFilesOnly())
	if err != nil && !errors.Is(err, errEnough) {
		return walkFailed(ctx, "path_glob", glob, err)
	}
	var notes []string
	if more {
		notes = append(notes, fmt.Sprintf("[more matches left out: at most %d lines are shown; narrow pattern or path_glob]", s.maxMatches))
	}
	var skipped []string
	for _, c := range []struct {
		n    int
		what string
	}{
		{skippedBinary, "binary"},
		{skippedLarge, fmt.Sprintf("over %d bytes", s.maxRead)},
		{unreadable, "that could not be opened"},
	} {
		if c.n > 0 {
			skipped = append(skipped, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(skipped) > 0 {
		notes = append(notes, "[files not searched: "+strings.Join(skipped, ", ")+"]")
	}
	if len(matches) == 0 {
		notes = append([]string{fmt.Sprintf("[no lines match %s in the files matching %s]", strconv.Quote(a.Pattern), strconv.Quote(glob))}, notes...)
	}
	return tools.Result{Text: strings.Join(append(matches, notes...), "\n")}, nil
}

// lines yields the lines of data with their numbers from 1, without the
// line ending ("\n" or "\r\n").
func lines(data []byte) func(yield func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		for n := 1; len(data) > 0; n++ {
			line, rest, _ := bytes.Cut(data, []byte{'\n'})
			if !yield(n, bytes.TrimSuffix(line, []byte{'\r'})) {
				return
			}
			data = rest
		}
	}
}

// clip returns a line for grep's output: valid UTF-8, cut at
// maxLineBytes (on a character boundary) with "…" when longer.
func clip(line []byte) string {
	if len(line) <= maxLineBytes {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	cut := maxLineBytes
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(line[:cut]), "\uFFFD") + "…"
}

// unwrapSyntax returns the part of a regexp error that says what is
// wrong, without the "error parsing regexp: " prefix.
func unwrapSyntax(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return se.Code.String() + ": " + strconv.Quote(se.Expr)
	}
	return err.Error()
}
