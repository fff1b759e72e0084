package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/skillkit/skillkit/skill"
)

// Options configures a Catalog. A nil *Options or a zero field means the
// default.
type Options struct {
	// DescriptionMaxLength caps each description, counted in UTF-16 code
	// units (the dsh skill tool's catalogDescriptionMaxLength). Zero means
	// DefaultDescriptionMaxLength; any other value below
	// MinDescriptionMaxLength is an error.
	DescriptionMaxLength int
}

// Catalog is the model-facing list of skills: every model-invocable summary,
// sorted by name in byte order, with its description run through the
// pipeline (normalize, cap, escape). It is immutable and safe for
// concurrent use; the order never depends on the request, so a rendered
// catalog is prefix-cache stable.
type Catalog struct {
	max     int
	entries []Entry

	digestOnce sync.Once
	digest     string
}

// Entry is one line of a catalog.
type Entry struct {
	// Name is the skill's name, rendered verbatim (New accepts only names
	// that satisfy skill.ValidName, so it needs no escaping).
	Name string
	// Description is the normalized, capped and escaped description.
	Description string
	// Summary is the skill as discovery described it, for renderers that
	// want more than the name and description.
	Summary skill.Summary
}

// Errors returned by New for summaries the catalog cannot list.
var (
	// ErrInvalidName reports a summary whose name fails the skill tool's
	// name rule: the model could never load it.
	ErrInvalidName = errors.New("catalog: invalid skill name")
	// ErrDuplicateName reports two model-invocable summaries with one name;
	// the registry resolves such conflicts before a catalog is built.
	ErrDuplicateName = errors.New("catalog: duplicate skill name")
)

// New builds the catalog of the model-invocable skills in summaries. The
// input order does not matter. Summaries with ModelInvocable false are left
// out (a user can still invoke them directly). An invalid option, an invalid
// name or a duplicate name is an error.
func New(summaries []skill.Summary, opts *Options) (*Catalog, error) {
	max, err := opts.maxLength()
	if err != nil {
		return nil, err
	}
	// Sort (name, index) pairs, not summaries: moving or reaching through
	// whole structs dominates the cost otherwise.
	type key struct {
		name string
		i    int
	}
	keys := make([]key, 0, len(summaries))
	for i := range summaries {
		s := &summaries[i]
		if !s.ModelInvocable {
			continue
		}
		if !skill.ValidName(s.Name) {
			return nil, fmt.Errorf("%w %q (skill at %s): names must match ^[a-z0-9]+(?:-[a-z0-9]+)*$; rename the skill or drop it before building the catalog",
				ErrInvalidName, s.Name, where(*s))
		}
		keys = append(keys, key{s.Name, i})
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.name, b.name) })
	order := make([]int, len(keys))
	for k, e := range keys {
		order[k] = e.i
	}
	entries := make([]Entry, len(order))
	// Every description is written into one buffer and sliced out of one
	// string: one allocation instead of several per skill.
	size := 0
	for _, i := range order {
		size += len(summaries[i].Description)
	}
	buf := make([]byte, 0, size+size/8)
	ends := make([]int, len(order))
	for k, i := range order {
		s := &summaries[i]
		if k > 0 && s.Name == entries[k-1].Name {
			return nil, fmt.Errorf("%w %q (from %s and %s): resolve same-name conflicts by rank before building the catalog",
				ErrDuplicateName, s.Name, where(entries[k-1].Summary), where(*s))
		}
		buf = appendDescription(buf, s.Description, max)
		ends[k] = len(buf)
		entries[k] = Entry{Name: s.Name, Summary: *s}
	}
	text, start := string(buf), 0
	for k := range entries {
		entries[k].Description = text[start:ends[k]]
		start = ends[k]
	}
	return &Catalog{max: max, entries: entries}, nil
}

// Len returns the number of entries.
func (c *Catalog) Len() int { return len(c.entries) }

// Empty reports whether the catalog lists no skill; an empty catalog sends
// no tokens at all.
func (c *Catalog) Empty() bool { return len(c.entries) == 0 }

// DescriptionMaxLength returns the cap the entries' descriptions were built
// with.
func (c *Catalog) DescriptionMaxLength() int { return c.max }

// Entries returns a copy of the entries in catalog order.
func (c *Catalog) Entries() []Entry { return slices.Clone(c.entries) }

// Digest identifies the catalog's content: "sha256:" followed by the hex
// SHA-256 of the entries (name and rendered description, in catalog order).
// Equal content gives an equal digest whatever order the summaries came in;
// a session compares digests to decide whether to append a replacement
// catalog.
func (c *Catalog) Digest() string {
	// Computed on first use: most renders never need it.
	c.digestOnce.Do(func() { c.digest = Digest(c.entries) })
	return c.digest
}

// Render renders the whole catalog with r. A nil r means Reminder{}.
func (c *Catalog) Render(r Renderer) string {
	if r == nil {
		r = Reminder{}
	}
	return r.Render(Request{Entries: c.entries})
}

// maxLength resolves and checks the description cap.
func (o *Options) maxLength() (int, error) {
	if o == nil || o.DescriptionMaxLength == 0 {
		return DefaultDescriptionMaxLength, nil
	}
	if o.DescriptionMaxLength < MinDescriptionMaxLength {
		return 0, fmt.Errorf("%w: Options.DescriptionMaxLength is %d; use 0 for the default (%d) or a value of 3 or more",
			ErrInvalidMaxLength, o.DescriptionMaxLength, DefaultDescriptionMaxLength)
	}
	return o.DescriptionMaxLength, nil
}

// Digest returns "sha256:" followed by the hex SHA-256 of entries, in the
// order given: each name and description is hashed with its length in
// front, so no choice of characters can make two different lists collide.
// Catalog.Digest is Digest of the catalog's entries.
func Digest(entries []Entry) string {
	h := sha256.New()
	var buf []byte
	for _, e := range entries {
		buf = binary.AppendUvarint(buf[:0], uint64(len(e.Name)))
		buf = append(buf, e.Name...)
		buf = binary.AppendUvarint(buf, uint64(len(e.Description)))
		buf = append(buf, e.Description...)
		h.Write(buf)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// where names a summary's origin for error messages.
func where(s skill.Summary) string {
	switch {
	case s.Path != "":
		return s.Path
	case s.Source != "":
		return "source " + s.Source + ", " + s.Dir
	default:
		return s.Dir
	}
}
