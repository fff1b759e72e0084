package mcpsource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/skill"
)

// read performs resources/read of one listed file and verifies it (see
// the package comment); for SKILL.md it also compares the front matter
// with the listing and comments out allowed-tools.
func (r *Remote) read(e *skillEntry, f *fileEntry) ([]byte, error) {
	if r.base.Err() != nil {
		return nil, r.errorf("reading %q: %w", f.uri, ErrClosed)
	}
	ctx, cancel := context.WithTimeout(r.base, r.opts.ReadTimeout)
	defer cancel()
	res, err := r.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: f.uri})
	if err != nil {
		if r.base.Err() != nil {
			return nil, r.errorf("reading %q: %w", f.uri, ErrClosed)
		}
		return nil, r.errorf("reading %q: %w", f.uri, r.red.scrub(err))
	}
	var c *sdk.ResourceContents
	for _, x := range res.Contents {
		if x == nil || x.URI != f.uri {
			continue
		}
		if c != nil {
			return nil, r.errorf("%q: the server answered with its contents twice: %w", f.uri, ErrVerify)
		}
		c = x
	}
	if c == nil {
		return nil, r.errorf("%q: the server answered with %d contents, none for this URI: %w", f.uri, len(res.Contents), ErrVerify)
	}
	data := c.Blob
	if data == nil {
		data = []byte(c.Text)
	}
	if err := r.verify(e, f, data); err != nil {
		return nil, err
	}
	if f.rel != skill.FileName {
		return data, nil
	}
	doc, err := r.checkFront(e, data)
	if err != nil {
		return nil, err
	}
	if _, ok := doc.Raw[skill.FieldAllowedTools]; !ok {
		return data, nil
	}
	out, err := dropAllowedTools(data, doc.Raw)
	if err != nil {
		return nil, r.errorf("%q: %v; the skill is refused rather than served with a tool pre-approval skillkit does not honour", f.uri, err)
	}
	return out, nil
}

// verify checks data against the listed size and digest, or, for a
// dynamic SKILL.md, against what its first read pinned.
func (r *Remote) verify(e *skillEntry, f *fileEntry, data []byte) error {
	size, sum := int64(len(data)), sha256.Sum256(data)
	if f.size < 0 {
		if size > r.opts.MaxBytes {
			return r.errorf("%q is %d bytes, over the %d-byte per-skill limit (Options.MaxBytes): %w", f.uri, size, r.opts.MaxBytes, ErrVerify)
		}
		e.pin.Lock()
		defer e.pin.Unlock()
		if !e.pin.set {
			e.pin.set, e.pin.size, e.pin.sum = true, size, sum
			return nil
		}
		if size != e.pin.size || sum != e.pin.sum {
			return r.errorf("%q (dynamic) changed since it was first read (%d bytes, sha256:%x; now %d bytes, sha256:%x); relist the server: %w", f.uri, e.pin.size, e.pin.sum, size, sum, ErrVerify)
		}
		return nil
	}
	if size != f.size {
		return r.errorf("%q is %d bytes; the listing says %d: %w", f.uri, size, f.size, ErrVerify)
	}
	if sum != f.sum {
		return r.errorf("%q has sha256:%x; the listing says sha256:%x: %w", f.uri, sum, f.sum, ErrVerify)
	}
	return nil
}

// checkFront parses a verified SKILL.md and compares its front matter,
// field by field, with the listed frontmatter, both as JSON values.
func (r *Remote) checkFront(e *skillEntry, data []byte) (*skill.Document, error) {
	doc, _, err := skill.Parse(data, skill.ParseOptions{File: e.uri, MaxSize: int64(len(data)) + 1})
	if err != nil || doc == nil {
		return nil, r.errorf("%q: its front matter cannot be read (%v), so it cannot be compared with the listing: %w", e.uri, err, ErrVerify)
	}
	if diffs := frontDiff(e.front, doc.Raw); len(diffs) > 0 {
		return nil, r.errorf("%q: its front matter differs from the listing: %s: %w", e.uri, strings.Join(diffs, "; "), ErrVerify)
	}
	return doc, nil
}

// frontDiff compares listed front matter with a file's (skill's Raw),
// and describes up to three differences, by field name.
func frontDiff(listed, raw map[string]any) []string {
	file, bad := jsonValues(raw)
	keys := make([]string, 0, len(listed)+len(file))
	for k := range listed {
		keys = append(keys, k)
	}
	for k := range file {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []string
	for _, k := range keys {
		l, inList := listed[k]
		f, inFile := file[k]
		switch {
		case bad[k]:
			out = append(out, fmt.Sprintf("field %q of the file has no JSON form", clip(k)))
		case !inFile:
			out = append(out, fmt.Sprintf("field %q is listed but not in the file", clip(k)))
		case !inList:
			out = append(out, fmt.Sprintf("field %q is in the file but not listed", clip(k)))
		case !reflect.DeepEqual(l, f):
			out = append(out, fmt.Sprintf("field %q is %s in the listing, %s in the file", clip(k), short(l), short(f)))
		}
		if len(out) == 3 {
			out = append(out, "…")
			break
		}
	}
	return out
}

// jsonValues converts front-matter values to what encoding/json decodes
// their JSON form to, so they compare with the listing's; bad marks a
// field with no JSON form.
func jsonValues(raw map[string]any) (map[string]any, map[string]bool) {
	out := make(map[string]any, len(raw))
	bad := map[string]bool{}
	for k, v := range raw {
		b, err := json.Marshal(v)
		var x any
		if err == nil {
			err = json.Unmarshal(b, &x)
		}
		if err != nil {
			bad[k] = true
			continue
		}
		out[k] = x
	}
	return out, bad
}

// short renders a JSON value for a message, quoted and clipped.
func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = clip(s[:60])
	}
	return fmt.Sprintf("%q", s)
}

// dropAllowedTools comments out the top-level allowed-tools field of a
// SKILL.md's front matter in place: a '#' over the first byte of the
// field's line and of each line that continues its value (indented,
// block-sequence or comment lines), so the file keeps its size. The
// result must parse to the same front matter less that field, or it is
// refused: an unusual layout is not guessed at.
func dropAllowedTools(data []byte, raw map[string]any) ([]byte, error) {
	out := bytes.Clone(data)
	lines := bytes.SplitAfter(out, []byte("\n"))
	fence := func(l []byte) bool {
		l = bytes.TrimRight(l, " \t\r\n")
		return string(l) == "---"
	}
	off := 0
	if len(lines) == 0 || !fence(bytes.TrimPrefix(lines[0], []byte("\ufeff"))) {
		return nil, fmt.Errorf("front matter not found where allowed-tools must be removed")
	}
	off += len(lines[0])
	inField := false
	for _, l := range lines[1:] {
		if fence(l) {
			break
		}
		content := bytes.TrimRight(l, "\r\n")
		switch {
		case isAllowedToolsKey(content):
			inField = true
			out[off] = '#'
		case inField && len(content) == 0:
		case inField && (content[0] == ' ' || content[0] == '\t' || content[0] == '-' || content[0] == '#'):
			out[off] = '#'
		default:
			inField = false
		}
		off += len(l)
	}
	doc, _, err := skill.Parse(out, skill.ParseOptions{MaxSize: int64(len(out)) + 1})
	if err != nil || doc == nil {
		return nil, fmt.Errorf("its front matter does not parse once allowed-tools is removed (%v)", err)
	}
	want := make(map[string]any, len(raw))
	for k, v := range raw {
		if k != skill.FieldAllowedTools {
			want[k] = v
		}
	}
	if !reflect.DeepEqual(doc.Raw, want) {
		return nil, fmt.Errorf("allowed-tools cannot be removed from its front matter without changing other fields (write it as a plain top-level field)")
	}
	return out, nil
}

// isAllowedToolsKey reports whether a front-matter line starts the
// top-level allowed-tools field.
func isAllowedToolsKey(line []byte) bool {
	for _, k := range []string{"allowed-tools", `"allowed-tools"`, `'allowed-tools'`} {
		rest, ok := bytes.CutPrefix(line, []byte(k))
		if !ok {
			continue
		}
		rest = bytes.TrimLeft(rest, " \t")
		if len(rest) > 0 && rest[0] == ':' && (len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t') {
			return true
		}
	}
	return false
}
