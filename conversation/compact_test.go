package conversation_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
)

// words counts whitespace-separated words: a token count that tests can
// reason about.
func words(s string) (int, error) { return len(strings.Fields(s)), nil }

// answer records one answer of the model with the given calls (name and
// arguments, alternating).
func answer(t *testing.T, c *conv, text string, calls ...string) {
	t.Helper()
	var tc []session.ToolCall
	for i := 0; i+1 < len(calls); i += 2 {
		tc = append(tc, session.ToolCall{Name: calls[i], Arguments: calls[i+1]})
	}
	if _, err := c.Respond(t.Context(), conversation.Assistant{Text: text, Calls: tc}); err != nil {
		t.Fatal(err)
	}
}

// requestText is the next request as one string, and its messages.
func requestText(t *testing.T, c *conv) (string, []assembly.Message) {
	t.Helper()
	req, err := c.Request(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String(), req.Messages
}

func TestCompactAcrossTurns(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{Lifetime: loadstate.Session, System: "Be brief."}, newSnap(t))
		do(t, c, "user first question about alpha")
		answer(t, c, "", "skill_load", `{"skill":"alpha"}`)
		answer(t, c, "first answer")
		do(t, c, "user second question")
		answer(t, c, "", "skill", `{"name":"beta"}`)
		answer(t, c, "second answer")
		if p, err := c.PlanCompaction(t.Context(), 1000, words); err != nil || p != nil {
			t.Fatalf("PlanCompaction: %+v, %v; everything fits, so only the catalog could go: nothing to do", p, err)
		}
		p, err := c.PlanCompaction(t.Context(), 3, words)
		if err != nil || p == nil {
			t.Fatalf("PlanCompaction: %v, %v", p, err)
		}
		// Kept: the last answer only; the summary covers everything before.
		s := c.session(t)
		lastAnswer := s.Events[len(s.Events)-1]
		if p.Through != lastAnswer.Seq-1 {
			t.Fatalf("Through = %d; want %d (the event before the last answer)", p.Through, lastAnswer.Seq-1)
		}
		for _, want := range []string{"User: first question about alpha", `Assistant called skill_load({"skill":"alpha"})`, "Result of skill_load: loaded: alpha",
			"Assistant: first answer", "User: second question", "Result of skill: [the instructions of skill beta]"} {
			if !strings.Contains(p.Transcript, want) {
				t.Errorf("transcript lacks %q:\n%s", want, p.Transcript)
			}
		}
		for _, never := range []string{"# Alpha", "# Beta", "system-reminder", "second answer"} {
			if strings.Contains(p.Transcript, never) {
				t.Errorf("transcript holds %q:\n%s", never, p.Transcript)
			}
		}
		sum, err := c.Compact(t.Context(), p.Through, "The user asked two questions; alpha and beta were used.")
		if err != nil {
			t.Fatal(err)
		}
		if sum.Kind != session.KindSummary || sum.Summarizes != p.Through {
			t.Fatalf("summary event %+v", sum)
		}
		text, msgs := requestText(t, c)
		if msgs[0].Content != "Be brief." || !strings.HasPrefix(msgs[1].Content, assembly.SummaryHeader+"\nThe user asked two questions") {
			t.Fatalf("request starts %q, %q", msgs[0].Content, msgs[1].Content)
		}
		// The catalog is published again and sent right after the
		// summary, before the history it precedes.
		if !strings.Contains(msgs[2].Content, "<system-reminder>") || strings.Count(text, "<system-reminder>") != 1 {
			t.Fatalf("the catalog is not sent once, right after the summary:\n%s", text)
		}
		if strings.Contains(text, "first question") || !strings.Contains(text, "second answer") {
			t.Fatalf("request after compaction:\n%s", text)
		}
		// beta, shown in the current turn, is shown again since its result
		// was cut; alpha, of the earlier turn, is condensed by the summary.
		if !strings.Contains(msgs[3].Content, assembly.FallbackHeader) || !strings.Contains(msgs[3].Content, "# Beta") || strings.Contains(text, "# Alpha") {
			t.Fatalf("fallback after compaction:\n%s", text)
		}
		// Compacting the same history again is stale; so is the future.
		if _, err := c.Compact(t.Context(), p.Through, "again"); !errors.Is(err, conversation.ErrStaleCompaction) {
			t.Fatalf("second Compact: %v; want ErrStaleCompaction", err)
		}
		if _, err := c.Compact(t.Context(), 999, "future"); !errors.Is(err, conversation.ErrStaleCompaction) {
			t.Fatalf("Compact beyond the last event: %v; want ErrStaleCompaction", err)
		}
		// A second compaction starts from the first summary.
		do(t, c, "user third question")
		answer(t, c, "third answer")
		p2, err := c.PlanCompaction(t.Context(), 0, words)
		if err != nil || p2 == nil || p2.Previous == "" || !strings.HasPrefix(p2.Transcript, "Earlier summary:\nThe user asked two questions") ||
			strings.Contains(p2.Transcript, "first question") {
			t.Fatalf("second plan %+v, %v", p2, err)
		}
	})
}

// TestCompactWithinTheTurn: a compaction that cuts the current turn's
// load shows the skill again in the fallback message; one loaded in an
// earlier turn is shown only with FallbackOnSummary.
func TestCompactWithinTheTurn(t *testing.T) {
	for _, fallbackOnSummary := range []bool{false, true} {
		c := open(t, session.NewMemoryStore(nil), conversation.Options{Lifetime: loadstate.Session, FallbackOnSummary: fallbackOnSummary}, newSnap(t))
		do(t, c, "user earlier turn")
		answer(t, c, "", "skill_load", `{"skill":"beta"}`)
		answer(t, c, "done")
		do(t, c, "user long task")
		answer(t, c, "", "skill_load", `{"skill":"alpha"}`)
		answer(t, c, "", "skill_list_docs", `{"skill":"alpha"}`)
		answer(t, c, "", "skill_list_docs", `{"skill":"alpha"}`)
		p, err := c.PlanCompaction(t.Context(), 0, words)
		if err != nil || p == nil {
			t.Fatalf("PlanCompaction: %v, %v", p, err)
		}
		if _, err := c.Compact(t.Context(), p.Through, "Summary."); err != nil {
			t.Fatal(err)
		}
		text, _ := requestText(t, c)
		if !strings.Contains(text, assembly.FallbackHeader) || !strings.Contains(text, "# Alpha") {
			t.Fatalf("FallbackOnSummary %v: the current turn's skill is not shown again:\n%s", fallbackOnSummary, text)
		}
		if got := strings.Contains(text, "# Beta"); got != fallbackOnSummary {
			t.Fatalf("FallbackOnSummary %v: the earlier turn's skill shown %v:\n%s", fallbackOnSummary, got, text)
		}
		if strings.Count(text, "# Alpha") != 1 {
			t.Fatalf("alpha's body is sent %d times:\n%s", strings.Count(text, "# Alpha"), text)
		}
	}
}

func TestPlanCompactionNothingToDo(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Options{}, newSnap(t))
	if p, err := c.PlanCompaction(t.Context(), 0, words); p != nil || err != nil {
		t.Fatalf("empty session: %+v, %v", p, err)
	}
	do(t, c, "user hi")
	answer(t, c, "hello")
	// Only the newest answer is kept: the catalog and the user message go.
	p, err := c.PlanCompaction(t.Context(), 0, words)
	if err != nil || p == nil || p.Events != 2 || p.Transcript != "User: hi\n" {
		t.Fatalf("one turn: %+v, %v", p, err)
	}
	// At the start of a turn, its user message is kept and the answer
	// before it can go.
	do(t, c, "user next")
	p, err = c.PlanCompaction(t.Context(), 0, words)
	if err != nil || p == nil || p.Events != 3 || !strings.HasSuffix(p.Transcript, "Assistant: hello\n") {
		t.Fatalf("one turn: %+v, %v", p, err)
	}
	if _, err := c.PlanCompaction(t.Context(), -1, words); err == nil {
		t.Fatal("negative keepTokens accepted")
	}
	if _, err := c.Compact(t.Context(), p.Through, " "); err == nil {
		t.Fatal("empty summary accepted")
	}
	// Another agent's history is not this one's.
	h := c.as(t, "helper")
	if p, err := h.PlanCompaction(t.Context(), 0, words); p != nil || err != nil {
		t.Fatalf("another agent: %+v, %v", p, err)
	}
}
