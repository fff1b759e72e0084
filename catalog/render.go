package catalog

import (
	"strconv"
	"strings"
)

// Request is what a Renderer receives: the entries to show, in catalog order
// (byte order of name), and how many skills a token budget left out.
type Request struct {
	// Entries are the skills to show, in catalog order.
	Entries []Entry
	// Omitted counts the skills left out to fit a token budget. When it is
	// not zero the rendered text must contain Note(), so the model learns
	// that the list is incomplete and how to reach the rest.
	Omitted int
}

// Note returns the line that says how many skills were left out and how to
// reach them, or "" when none were.
func (r Request) Note() string {
	if r.Omitted <= 0 {
		return ""
	}
	if r.Omitted == 1 {
		return "(1 more skill is not listed here, to keep this catalog within its token budget. It can still be loaded with the `skill` tool by its exact name, for example when the user names it.)"
	}
	return "(" + strconv.Itoa(r.Omitted) + " more skills are not listed here, to keep this catalog within its token budget. They can still be loaded with the `skill` tool by their exact names, for example when the user names one.)"
}

// Empty reports whether there is nothing to tell the model: no entry and
// nothing omitted. Renderers return "" for an empty request.
func (r Request) Empty() bool { return len(r.Entries) == 0 && r.Omitted <= 0 }

// Renderer turns a Request into the text the model sees. Rendering is pure:
// it must depend only on the request, so equal catalogs render to equal
// bytes and the prompt cache survives.
type Renderer interface {
	Render(req Request) string
}

// RendererFunc adapts a function to Renderer, for caller-supplied formats.
type RendererFunc func(req Request) string

// Render calls f(req).
func (f RendererFunc) Render(req Request) string { return f(req) }

// Reminder renders the dsh skill tool's <system-reminder> catalog byte for
// byte (its "Skill catalog template"): one "- `NAME`: DESCRIPTION" line per
// entry between <available_skills> tags. An empty request renders "" so no
// catalog tokens are sent. The budget note, when there is one, follows the
// closing </available_skills> tag.
type Reminder struct{}

// Render implements Renderer.
func (Reminder) Render(req Request) string {
	if req.Empty() {
		return ""
	}
	return renderReminder(req, reminderIntro)
}

// Replacement renders the catalog that a session appends when the skill
// set changed mid-conversation (the earlier message is never edited, so the
// prompt cache survives). It is the Reminder with its first sentence
// replaced by one that says this list supersedes every earlier one; when no
// skill is left it renders the Tombstone instead. A session decides whether
// to append it by comparing Catalog.Digest with the digest of the catalog
// it published last; after compaction it publishes a fresh Reminder.
type Replacement struct{}

// Render implements Renderer.
func (Replacement) Render(req Request) string {
	if req.Empty() {
		return Tombstone
	}
	return renderReminder(req, replacementIntro)
}

// Tombstone is the short message a session appends when the catalog it
// published earlier has become empty: no skill can be loaded by the model
// any more, and names from earlier catalogs must not be used.
const Tombstone = "<system-reminder>\n" +
	"The available skill catalog changed. No skills are available through the `skill` tool any more; do not use names from earlier skill catalogs.\n" +
	"</system-reminder>"

// ListReplacement is Replacement for the List format: the full list after
// a line saying it replaces every earlier one, or ListTombstone when no
// skill is left.
type ListReplacement struct{}

// Render implements Renderer.
func (ListReplacement) Render(req Request) string {
	if req.Empty() {
		return ListTombstone
	}
	return ListReplacementIntro + List{}.Render(req)
}

// ListReplacementIntro precedes a list that replaces an earlier one.
const ListReplacementIntro = "The available skills changed. This complete list replaces every earlier one:\n"

// ListTombstone replaces a list-format catalog that has become empty.
const ListTombstone = "The available skills changed. No skills are available any more; do not use names from earlier lists."

// List renders a plain "Available skills:" block, one "- NAME: DESCRIPTION"
// line per entry ("- NAME" when the description is empty), for system
// messages that are not the reminder. The budget note, when there
// is one, is the last line. An empty request renders "".
type List struct{}

// Render implements Renderer.
func (List) Render(req Request) string {
	if req.Empty() {
		return ""
	}
	var b strings.Builder
	b.Grow(len(ListHeader) + entriesSize(req.Entries) + 256)
	b.WriteString(ListHeader)
	for _, e := range req.Entries {
		b.WriteString("\n- ")
		b.WriteString(e.Name)
		if e.Description != "" {
			b.WriteString(": ")
			b.WriteString(e.Description)
		}
	}
	if note := req.Note(); note != "" {
		b.WriteByte('\n')
		b.WriteString(note)
	}
	return b.String()
}

// Template text of the dsh skill tool's "Skill catalog template".
const (
	reminderOpen     = "<system-reminder>\n"
	reminderIntro    = "A skill is a reusable set of task-specific instructions. The following skills are available in this session:"
	replacementIntro = "The available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:"
	listOpen         = "\n\n<available_skills>\n"
	listClose        = "</available_skills>\n"
	reminderClose    = "\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\n" +
		"</system-reminder>"
)

// ListHeader is the first line of a list-format catalog.
const ListHeader = "Available skills:"

// renderReminder writes the reminder template with the given first sentence.
func renderReminder(req Request, intro string) string {
	var b strings.Builder
	b.Grow(len(reminderOpen) + len(intro) + len(listOpen) + len(listClose) + len(reminderClose) + entriesSize(req.Entries) + 256)
	b.WriteString(reminderOpen)
	b.WriteString(intro)
	b.WriteString(listOpen)
	for _, e := range req.Entries {
		b.WriteString("- `")
		b.WriteString(e.Name)
		b.WriteString("`: ")
		b.WriteString(e.Description)
		b.WriteByte('\n')
	}
	b.WriteString(listClose)
	if note := req.Note(); note != "" {
		b.WriteString(note)
		b.WriteByte('\n')
	}
	b.WriteString(reminderClose)
	return b.String()
}

// entriesSize is the byte size of the entries' variable text plus the
// per-line framing, to size the output buffer once.
func entriesSize(entries []Entry) int {
	n := 0
	for _, e := range entries {
		n += len(e.Name) + len(e.Description) + 8
	}
	return n
}
