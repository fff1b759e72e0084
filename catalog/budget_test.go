package catalog

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillkit/skillkit/skill"
)

// budgetCatalog has 12 skills with 300-character descriptions in three
// source ranks.
func budgetCatalog(t *testing.T) *Catalog {
	t.Helper()
	summaries := make([]skill.Summary, 12)
	for i := range summaries {
		s := sum("skill-"+strconv.Itoa(10+i), strings.Repeat("Handles task number "+strconv.Itoa(i)+" carefully. ", 12)[:300])
		s.Rank = i % 3
		summaries[i] = s
	}
	cat, err := New(summaries, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func newCounter(t *testing.T) *Counter {
	t.Helper()
	c, err := NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCount(t *testing.T, c *Counter, s string) int {
	t.Helper()
	n, err := c.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFitSteps(t *testing.T) {
	cat := budgetCatalog(t)
	counter := newCounter(t)
	full := cat.Render(nil)
	fullTokens := mustCount(t, counter, full)
	// What the frame alone with every skill omitted costs.
	frame := mustCount(t, counter, Reminder{}.Render(Request{Omitted: cat.Len()}))

	t.Run("fits as is at the limit", func(t *testing.T) {
		fit, err := cat.Fit(nil, Budget{MaxTokens: fullTokens, Counter: counter})
		if err != nil {
			t.Fatal(err)
		}
		if fit.Text != full || fit.Tokens != fullTokens || fit.Omitted != 0 || fit.Shown != 12 || fit.DescriptionMaxLength != 500 {
			t.Errorf("fit at the limit changed the catalog: %+v", fit)
		}
	})
	t.Run("one token under shortens descriptions", func(t *testing.T) {
		fit, err := cat.Fit(nil, Budget{MaxTokens: fullTokens - 1, Counter: counter})
		if err != nil {
			t.Fatal(err)
		}
		if fit.Omitted != 0 || fit.Shown != 12 {
			t.Errorf("dropped skills before shortening: %+v", fit)
		}
		if fit.DescriptionMaxLength != 250 {
			t.Errorf("cap = %d, want the first rung, 250", fit.DescriptionMaxLength)
		}
		if fit.Tokens > fullTokens-1 || mustCount(t, counter, fit.Text) != fit.Tokens {
			t.Errorf("tokens %d over budget %d or misreported", fit.Tokens, fullTokens-1)
		}
		if strings.Contains(fit.Text, "not listed here") {
			t.Error("note present although nothing was omitted")
		}
		for _, e := range cat.Entries() {
			want, _ := Description(e.Summary.Description, 250)
			if !strings.Contains(fit.Text, "- `"+e.Name+"`: "+want+"\n") {
				t.Errorf("entry %s not shortened to 250 units", e.Name)
			}
		}
	})
	t.Run("tight budget drops worst ranks first", func(t *testing.T) {
		budget := frame + 60
		fit, err := cat.Fit(nil, Budget{MaxTokens: budget, Counter: counter})
		if err != nil {
			t.Fatal(err)
		}
		if fit.Omitted == 0 || fit.Shown == 0 || fit.Shown+fit.Omitted != 12 {
			t.Fatalf("want some shown and some omitted: %+v", fit)
		}
		if fit.DescriptionMaxLength != DefaultMinDescriptionLength {
			t.Errorf("dropped at cap %d, want the floor %d", fit.DescriptionMaxLength, DefaultMinDescriptionLength)
		}
		if fit.Tokens > budget {
			t.Errorf("tokens %d over budget %d", fit.Tokens, budget)
		}
		note := Request{Omitted: fit.Omitted}.Note()
		if !strings.Contains(fit.Text, "</available_skills>\n"+note+"\n\nIf the user") {
			t.Errorf("note missing or misplaced:\n%s", fit.Text)
		}
		// The shown skills are the best by rank, then name, and listed in
		// name order; one more would not fit.
		entries := cat.entriesAt(DefaultMinDescriptionLength)
		order := dropOrder(entries, nil)
		var want []string
		for _, i := range order[:fit.Shown] {
			want = append(want, entries[i].Name)
			if entries[i].Summary.Rank > entries[order[fit.Shown]].Summary.Rank {
				t.Errorf("kept %s (rank %d) over a better-ranked skill", entries[i].Name, entries[i].Summary.Rank)
			}
		}
		slices.Sort(want)
		var got []string
		for line := range strings.SplitSeq(fit.Text, "\n") {
			if name, ok := strings.CutPrefix(line, "- `"); ok {
				got = append(got, name[:strings.IndexByte(name, '`')])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("shown %v, want %v", got, want)
		}
		shown := make([]bool, len(entries))
		for _, i := range order[:fit.Shown+1] {
			shown[i] = true
		}
		var more []Entry
		for i, e := range entries {
			if shown[i] {
				more = append(more, e)
			}
		}
		if n := mustCount(t, counter, Reminder{}.Render(Request{Entries: more, Omitted: 12 - len(more)})); n <= budget {
			t.Errorf("one more skill (%d tokens) would still fit in %d", n, budget)
		}
	})
	t.Run("budget for the note alone", func(t *testing.T) {
		fit, err := cat.Fit(nil, Budget{MaxTokens: frame, Counter: counter})
		if err != nil {
			t.Fatal(err)
		}
		if fit.Shown != 0 || fit.Omitted != 12 || fit.Tokens != frame {
			t.Errorf("want everything omitted at %d tokens: %+v", frame, fit)
		}
		golden(t, "budget-all-omitted.golden", fit.Text)
	})
	t.Run("too small for the note", func(t *testing.T) {
		_, err := cat.Fit(nil, Budget{MaxTokens: frame - 1, Counter: counter})
		if !errors.Is(err, ErrBudgetTooSmall) {
			t.Fatalf("err = %v, want ErrBudgetTooSmall", err)
		}
		if !strings.Contains(err.Error(), "at least "+strconv.Itoa(frame)) {
			t.Errorf("error %q does not say the minimum budget", err)
		}
	})
}

func TestFitGoldenDropped(t *testing.T) {
	summaries := []skill.Summary{
		sum("alpha", "First skill, from the project."),
		sum("beta", "Second skill, from the user's own folder; it is the one to go. "+strings.Repeat("It has a long description that costs more tokens than the note. ", 4)),
		sum("gamma", "Third skill, from the project."),
	}
	summaries[1].Rank = 1
	cat, err := New(summaries, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := newCounter(t)
	entries := cat.Entries()
	withoutBeta := List{}.Render(Request{Entries: []Entry{entries[0], entries[2]}, Omitted: 1})
	budget := mustCount(t, counter, withoutBeta)
	fit, err := cat.Fit(List{}, Budget{MaxTokens: budget, Counter: counter, MinDescriptionLength: 500})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Omitted != 1 || fit.Text != withoutBeta {
		t.Errorf("want beta (worst rank) dropped: %+v", fit)
	}
	golden(t, "budget-dropped.list.golden", fit.Text)
}

func TestFitDeterministic(t *testing.T) {
	cat := budgetCatalog(t)
	counter := newCounter(t)
	entries := cat.Entries()
	reversed := make([]skill.Summary, len(entries))
	for i, e := range entries {
		reversed[len(entries)-1-i] = e.Summary
	}
	other, err := New(reversed, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{150, 400, 900} {
		a, errA := cat.Fit(nil, Budget{MaxTokens: budget, Counter: counter})
		b, errB := other.Fit(nil, Budget{MaxTokens: budget})
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a != b {
			t.Errorf("budget %d: fits differ:\n%+v\n%+v", budget, a, b)
		}
	}
}

func TestFitEmptyCatalog(t *testing.T) {
	cat, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := cat.Fit(nil, Budget{MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Text != "" || fit.Tokens != 0 {
		t.Errorf("empty catalog fit = %+v, want nothing", fit)
	}
}

func TestFitErrors(t *testing.T) {
	cat := budgetCatalog(t)
	dropNote := RendererFunc(func(req Request) string {
		return List{}.Render(Request{Entries: req.Entries})
	})
	tests := []struct {
		name string
		r    Renderer
		b    Budget
		want error
	}{
		{"zero budget", nil, Budget{}, ErrInvalidBudget},
		{"negative budget", nil, Budget{MaxTokens: -1}, ErrInvalidBudget},
		{"floor below 3", nil, Budget{MaxTokens: 100, MinDescriptionLength: 2}, ErrInvalidBudget},
		{"renderer drops the note", dropNote, Budget{MaxTokens: 200}, ErrNoteMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := cat.Fit(tt.r, tt.b); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCapLadder(t *testing.T) {
	tests := []struct {
		top, floor int
		want       []int
	}{
		{500, 64, []int{500, 250, 125, 64}},
		{500, 3, []int{500, 250, 125, 62, 31, 15, 7, 3}},
		{64, 64, []int{64}},
		{50, 64, []int{50}},
		{130, 64, []int{130, 65, 64}},
	}
	for _, tt := range tests {
		if got := capLadder(tt.top, tt.floor); !slices.Equal(got, tt.want) {
			t.Errorf("capLadder(%d, %d) = %v, want %v", tt.top, tt.floor, got, tt.want)
		}
	}
}

func TestNote(t *testing.T) {
	if (Request{}).Note() != "" {
		t.Error("note for nothing omitted")
	}
	if n := (Request{Omitted: 1}).Note(); !strings.Contains(n, "1 more skill is") || !strings.Contains(n, "`skill` tool") || !strings.Contains(n, "exact name") {
		t.Errorf("singular note %q", n)
	}
	if n := (Request{Omitted: 1234}).Note(); !strings.HasPrefix(n, "(1234 more skills are") {
		t.Errorf("plural note %q", n)
	}
}

// TestFitKeepsAsManyAsFit checks, over many budgets, that Fit's answer fits
// and that keeping one more skill would not.
func TestFitKeepsAsManyAsFit(t *testing.T) {
	summaries := make([]skill.Summary, 120)
	for i := range summaries {
		s := sum("s-"+strconv.Itoa(1000+i*7919%1000), strings.Repeat("word"+strconv.Itoa(i%13)+" ", 3+i%17))
		s.Rank = i % 4
		summaries[i] = s
	}
	cat, err := New(summaries, nil)
	if err != nil {
		t.Fatal(err)
	}
	counter := newCounter(t)
	entries := cat.entriesAt(DefaultMinDescriptionLength)
	order := dropOrder(entries, nil)
	render := func(r Renderer, k int) string {
		kept := make([]bool, len(entries))
		for _, i := range order[:k] {
			kept[i] = true
		}
		var shown []Entry
		for i, e := range entries {
			if kept[i] {
				shown = append(shown, e)
			}
		}
		return r.Render(Request{Entries: shown, Omitted: len(entries) - k})
	}
	// A custom renderer that spends more per skill than the estimate
	// assumes, so the search must walk down from it.
	verbose := RendererFunc(func(req Request) string {
		var b strings.Builder
		for _, e := range req.Entries {
			b.WriteString("Skill " + e.Name + " (load it with the skill tool): " + e.Description + " / " + e.Description + "\n")
		}
		b.WriteString(req.Note())
		return b.String()
	})
	for _, r := range []Renderer{Reminder{}, List{}, verbose} {
		full := mustCount(t, counter, cat.Render(r))
		for _, budget := range []int{200, 333, 500, 777, 1000, 1500, full - 1} {
			fit, err := cat.Fit(r, Budget{MaxTokens: budget, Counter: counter})
			if err != nil {
				t.Fatalf("%T budget %d: %v", r, budget, err)
			}
			if fit.Tokens > budget || mustCount(t, counter, fit.Text) != fit.Tokens {
				t.Errorf("%T budget %d: %d tokens", r, budget, fit.Tokens)
			}
			if fit.Omitted == 0 {
				continue
			}
			if fit.Text != render(r, fit.Shown) {
				t.Errorf("%T budget %d: text is not the best %d skills", r, budget, fit.Shown)
			}
			if n := mustCount(t, counter, render(r, fit.Shown+1)); n <= budget {
				t.Errorf("%T budget %d: kept %d, but %d fit (%d tokens)", r, budget, fit.Shown, fit.Shown+1, n)
			}
		}
	}
}

// TestFitCharsAtTheLimit fits a catalog into exactly its own length in
// characters (kept whole) and one character less (cut), and keeps the
// recently used skills longest.
func TestFitCharsAtTheLimit(t *testing.T) {
	c := budgetCatalog(t)
	whole := c.Render(nil)
	n := utf8.RuneCountInString(whole)
	fit, err := c.Fit(nil, Budget{MaxChars: n})
	if err != nil || fit.Text != whole || fit.Omitted != 0 {
		t.Errorf("budget of exactly %d characters: %v, omitted %d, same text %v", n, err, fit.Omitted, fit.Text == whole)
	}
	fit, err = c.Fit(nil, Budget{MaxChars: n - 1})
	if err != nil || fit.Text == whole || utf8.RuneCountInString(fit.Text) > n-1 {
		t.Errorf("budget of %d characters: %v, %d characters", n-1, err, utf8.RuneCountInString(fit.Text))
	}
	small := n / 4
	last := c.entries[len(c.entries)-1].Name
	fit, err = c.Fit(nil, Budget{MaxChars: small, Recent: []string{last}})
	if err != nil || fit.Omitted == 0 || !strings.Contains(fit.Text, last) {
		t.Errorf("a recently used skill at the end of the order was left out: %v\n%s", err, fit.Text)
	}
	if _, err := c.Fit(nil, Budget{MaxChars: 10, MaxTokens: 10}); !errors.Is(err, ErrInvalidBudget) {
		t.Errorf("both budgets: %v", err)
	}
}
