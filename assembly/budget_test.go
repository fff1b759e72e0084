package assembly_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
)

// manySkills is a tree of n skills with long descriptions.
func manySkills(n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("skill-%02d", i)
		files[name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: " + strings.Repeat("Handles task number "+name+" in detail. ", 8) + "\n---\n\nBody of " + name + ".\n"
	}
	return files
}

// catalogText is the first catalog event of c's session.
func catalogText(t *testing.T, c *testConv, nth int) string {
	t.Helper()
	var texts []string
	for _, ev := range getSession(t, c).Events {
		if ev.Kind == session.KindContext && strings.Contains(ev.Text, "skill") && (strings.Contains(ev.Text, "<available_skills>") || strings.Contains(ev.Text, "no longer")) {
			texts = append(texts, ev.Text)
		}
	}
	if len(texts) <= nth {
		t.Fatalf("%d catalog events, want more than %d", len(texts), nth)
	}
	return texts[nth]
}

// TestCatalogBudget fits a 40-skill catalog into 3,000 characters: the
// descriptions are shortened, then the skills used least recently are
// left out, and a line says how many and how to reach them.
func TestCatalogBudget(t *testing.T) {
	files := manySkills(40)
	snap := newSnapshot(t, files)
	opts := conversation.Options{Catalog: assembly.CatalogOptions{Budget: &assembly.CatalogBudget{MaxChars: 3000}}}
	c := newConv(t, session.NewMemoryStore(nil), opts, "main", snap)
	user(t, c, "hello")
	first := catalogText(t, c, 0)
	if n := utf8.RuneCountInString(first); n > 3000 {
		t.Errorf("the catalog takes %d characters, over the budget of 3000", n)
	}
	if !strings.Contains(first, "more skills are not listed here") {
		t.Fatalf("no note about the skills left out:\n%s", first)
	}
	if !strings.Contains(first, "skill-00") || strings.Contains(first, "skill-39") {
		t.Errorf("without use, the end of the name order goes first:\n%s", first)
	}
	// The agent uses skill-39 and skill-38; a later catalog (the skills
	// changed) keeps them and leaves out others.
	call(t, c, "skill", `{"name":"skill-38"}`)
	call(t, c, "skill", `{"name":"skill-39"}`)
	files["skill-40/SKILL.md"] = "---\nname: skill-40\ndescription: Added later.\n---\n\nBody.\n"
	next := newSnapshot(t, files)
	c.opts.Skills = func(context.Context) *registry.Snapshot { return next }
	c2, err := conversation.Open(t.Context(), c.store, c.ID(), "main", &c.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.User(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	second := catalogText(t, c, 1)
	for _, want := range []string{"skill-39", "skill-38", "more skills are not listed here"} {
		if !strings.Contains(second, want) {
			t.Errorf("the replacement catalog lacks %q:\n%s", want, second)
		}
	}
	if n := utf8.RuneCountInString(second); n > 3000 {
		t.Errorf("the replacement takes %d characters", n)
	}
}

// TestCatalogBudgetFits leaves a catalog that fits as it is, and a bad
// budget is an error at Open.
func TestCatalogBudgetFits(t *testing.T) {
	snap := newSnapshot(t, manySkills(3))
	plain := newConv(t, session.NewMemoryStore(nil), conversation.Options{}, "main", snap)
	budgeted := newConv(t, session.NewMemoryStore(nil), conversation.Options{Catalog: assembly.CatalogOptions{Budget: &assembly.CatalogBudget{ContextWindow: 200_000}}}, "main", snap)
	user(t, plain, "hi")
	user(t, budgeted, "hi")
	if a, b := catalogText(t, plain, 0), catalogText(t, budgeted, 0); a != b {
		t.Errorf("a catalog within its budget changed:\n%s\n---\n%s", a, b)
	}
	for _, bad := range []assembly.CatalogBudget{{ContextWindow: -1}, {Share: 2}, {MaxChars: -5}} {
		o := conversation.Options{Catalog: assembly.CatalogOptions{Budget: &bad}}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "Catalog.Budget") {
			t.Errorf("budget %+v: %v", bad, err)
		}
	}
	// A window of 1,000 tokens gives 20: too small even for the note.
	tiny := conversation.Options{Catalog: assembly.CatalogOptions{Budget: &assembly.CatalogBudget{ContextWindow: 1000}}}
	c := newConv(t, session.NewMemoryStore(nil), tiny, "main", snap)
	if _, err := c.User(t.Context(), "hi"); err == nil || !strings.Contains(err.Error(), catalog.ErrBudgetTooSmall.Error()) {
		t.Errorf("a budget too small: %v", err)
	}
}

// TestCatalogBudgetDefault: without a budget set, a catalog over 8,000
// characters is fitted to them; NoBudget publishes it whole.
func TestCatalogBudgetDefault(t *testing.T) {
	snap := newSnapshot(t, manySkills(100)) // ≈ 20,000 characters
	c := newConv(t, session.NewMemoryStore(nil), conversation.Options{}, "main", snap)
	user(t, c, "hi")
	text := catalogText(t, c, 0)
	if n := utf8.RuneCountInString(text); n > assembly.DefaultBudgetChars || !strings.Contains(text, "more skills are not listed here") {
		t.Errorf("the default catalog takes %d characters (budget %d), note present %v", n, assembly.DefaultBudgetChars, strings.Contains(text, "more skills are not listed here"))
	}
	whole := newConv(t, session.NewMemoryStore(nil), conversation.Options{Catalog: assembly.CatalogOptions{NoBudget: true}}, "main", snap)
	user(t, whole, "hi")
	if text := catalogText(t, whole, 0); !strings.Contains(text, "skill-99") || strings.Contains(text, "not listed here") {
		t.Errorf("NoBudget cut the catalog (%d characters)", utf8.RuneCountInString(text))
	}
}
