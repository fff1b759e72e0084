package catalog

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/skill"
)

// benchSummaries makes n summaries with 100–200 byte descriptions (with
// line breaks to normalize and characters to escape), under names in no
// particular order so that New has real sorting to do.
func benchSummaries(n int) []skill.Summary {
	rng := rand.New(rand.NewPCG(7, 11))
	words := strings.Fields("extract text tables forms from PDF files merge split rotate pages fill review pull requests deploy services with the release checklist when the user asks & <notes>")
	out := make([]skill.Summary, n)
	for i := range out {
		var b strings.Builder
		target := 100 + rng.IntN(101)
		for w := 0; b.Len() < target; w++ {
			switch {
			case w == 0:
			case w%7 == 0:
				b.WriteString("\n  ") // a folded YAML line
			default:
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		out[i] = skill.Summary{
			Name:           "skill-" + strconv.Itoa(rng.IntN(1_000_000)) + "-" + strconv.Itoa(i),
			Description:    b.String()[:target],
			ModelInvocable: true,
			UserInvocable:  true,
			Rank:           i % 3,
		}
	}
	return out
}

// BenchmarkCatalog10k measures building and rendering the catalog of 10,000
// skills from in-memory summaries (target: under 5 ms per build+render).
func BenchmarkCatalog10k(b *testing.B) {
	summaries := benchSummaries(10_000)
	b.Run("New+Reminder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cat, err := New(summaries, nil)
			if err != nil {
				b.Fatal(err)
			}
			_ = cat.Render(Reminder{})
		}
	})
	cat, err := New(summaries, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Reminder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = cat.Render(Reminder{})
		}
	})
	b.Run("Digest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Digest(cat.entries)
		}
	})
}

// BenchmarkFit measures fitting catalogs into budgets that force shortening
// and dropping (each step renders and counts tokens, the slow part).
func BenchmarkFit(b *testing.B) {
	counter, err := NewCounter("")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000} {
		cat, err := New(benchSummaries(n), nil)
		if err != nil {
			b.Fatal(err)
		}
		budget := Budget{MaxTokens: 2 * n, Counter: counter}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fit, err := cat.Fit(nil, budget)
				if err != nil {
					b.Fatal(err)
				}
				if fit.Omitted == 0 {
					b.Fatal("budget did not force dropping")
				}
			}
		})
	}
}

// BenchmarkCount measures token counting of a 10,000-skill catalog.
func BenchmarkCount(b *testing.B) {
	cat, err := New(benchSummaries(10_000), nil)
	if err != nil {
		b.Fatal(err)
	}
	text := cat.Render(nil)
	counter, err := NewCounter("")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := counter.Count(text); err != nil {
			b.Fatal(err)
		}
	}
}
