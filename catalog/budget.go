package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultMinDescriptionLength is the lowest description cap, in UTF-16 code
// units, that Fit shortens descriptions to before it starts leaving skills
// out: below it a description stops saying what the skill is for.
const DefaultMinDescriptionLength = 64

// Errors returned by Catalog.Fit.
// BudgetError is the error of Fit for a budget below the smallest
// catalog it can render; it wraps ErrBudgetTooSmall. Callers that took
// the budget from a flag or setting word their own advice from Need.
type BudgetError struct {
	// MaxTokens is the budget asked for (0 when it was MaxChars).
	MaxTokens int
	// MaxChars is the budget asked for in characters (0 when it was
	// MaxTokens).
	MaxChars int
	// Need is the tokens of the catalog with every skill left out and the
	// note saying so: the smallest budget that fits.
	Need int
	// Encoding names the tokenizer that counted.
	Encoding string
}

// Error implements error.
func (e *BudgetError) Error() string {
	if e.MaxChars > 0 {
		return fmt.Sprintf("%v: Budget.MaxChars is %d but the catalog with every skill left out and its note takes %d characters; raise the budget to at least %d",
			ErrBudgetTooSmall, e.MaxChars, e.Need, e.Need)
	}
	return fmt.Sprintf("%v: Budget.MaxTokens is %d but the catalog with every skill left out and its note takes %d tokens (%s); raise the budget to at least %d",
		ErrBudgetTooSmall, e.MaxTokens, e.Need, e.Encoding, e.Need)
}

// Unwrap returns ErrBudgetTooSmall.
func (e *BudgetError) Unwrap() error { return ErrBudgetTooSmall }

var (
	// ErrBudgetTooSmall reports a token budget that cannot hold even the
	// catalog frame with every skill left out and the note that says so.
	ErrBudgetTooSmall = errors.New("catalog: token budget too small")
	// ErrInvalidBudget reports a Budget field out of range.
	ErrInvalidBudget = errors.New("catalog: invalid budget")
	// ErrNoteMissing reports a renderer that left out the note about
	// omitted skills; truncation is never silent.
	ErrNoteMissing = errors.New("catalog: renderer did not include the omitted-skills note")
)

// Budget bounds the size of a rendered catalog in tokens or characters.
type Budget struct {
	// MaxTokens is the most tokens the rendered catalog may take. Exactly
	// one of MaxTokens and MaxChars must be positive.
	MaxTokens int
	// MaxChars is the most characters (Unicode code points) the rendered
	// catalog may take: the budget of hosts that do not count tokens.
	MaxChars int
	// Recent names skills most recently used first: when skills must be
	// left out, these are kept longest, in this order, before the rest
	// (the least recently used go first).
	Recent []string
	// Counter counts the tokens. Nil means a Counter for DefaultEncoding,
	// created for this call; pass one created once to avoid that cost.
	Counter *Counter
	// MinDescriptionLength is the lowest description cap to shorten to
	// before leaving skills out. Zero means DefaultMinDescriptionLength;
	// other values below MinDescriptionMaxLength are an error. A value at
	// or above the catalog's own cap means descriptions are never shortened.
	MinDescriptionLength int
}

// Fitted is a catalog rendered within a Budget, with what it took to get
// there, so callers can log that shortening or dropping happened.
type Fitted struct {
	// Text is the rendered catalog.
	Text string
	// Tokens is the size of Text in the budget's unit: tokens, or
	// characters for a MaxChars budget.
	Tokens int
	// DescriptionMaxLength is the description cap the text was rendered
	// with: the catalog's own cap when nothing had to be shortened.
	DescriptionMaxLength int
	// Shown and Omitted count the skills listed and left out.
	Shown, Omitted int
}

// Fit renders the catalog with r (nil means Reminder{}) within b. It works
// in steps and stops at the first one that fits:
//
//  1. the catalog as it is;
//  2. every description capped lower, halving from the catalog's cap down to
//     b.MinDescriptionLength;
//  3. at that lowest cap, skills left out until the rest fit. Skills are left
//     out from the worst source rank first (highest Rank), and within a rank
//     from the end of the byte order of names; those shown stay in name
//     order. The text then carries Request.Note, which says how many skills
//     are missing and how to reach them.
//
// The result depends only on the catalog, r and b, never on the request, so
// it is prefix-cache stable; compute it once per catalog, not per request:
// token counting is the slow part (about 0.85 s for 10,000 skills that must
// be cut, on a loaded 2-core machine). A budget too small for the note alone is an
// error wrapping ErrBudgetTooSmall; a renderer that drops the note is an
// error wrapping ErrNoteMissing.
func (c *Catalog) Fit(r Renderer, b Budget) (Fitted, error) {
	if r == nil {
		r = Reminder{}
	}
	floor, err := b.check()
	if err != nil {
		return Fitted{}, err
	}
	var count func(string) (int, error)
	unit := "characters"
	if b.MaxChars > 0 {
		count = func(s string) (int, error) { return utf8.RuneCountInString(s), nil }
	} else {
		counter := b.Counter
		if counter == nil {
			if counter, err = NewCounter(DefaultEncoding); err != nil {
				return Fitted{}, err
			}
		}
		count, unit = counter.Count, counter.Encoding()
	}
	f := fitter{c: c, r: r, count: count, max: max(b.MaxTokens, b.MaxChars)}

	// Steps 1 and 2: the whole catalog at falling caps.
	for _, limit := range capLadder(c.max, floor) {
		entries := c.entries
		if limit != c.max {
			entries = c.entriesAt(limit)
		}
		fit, ok, err := f.try(Request{Entries: entries}, limit)
		if err != nil || ok {
			return fit, err
		}
	}

	// Step 3: keep the best k skills at the lowest cap.
	limit := min(floor, c.max)
	entries := c.entriesAt(limit)
	order := dropOrder(entries, b.Recent)
	keep := func(k int) Request {
		kept := make([]bool, len(entries))
		for _, i := range order[:k] {
			kept[i] = true
		}
		shown := make([]Entry, 0, k)
		for i, e := range entries {
			if kept[i] {
				shown = append(shown, e)
			}
		}
		return Request{Entries: shown, Omitted: len(entries) - k}
	}
	best, ok, err := f.try(keep(0), limit)
	if err != nil {
		return Fitted{}, err
	}
	if !ok {
		return Fitted{}, &BudgetError{MaxTokens: b.MaxTokens, MaxChars: b.MaxChars, Need: best.Tokens, Encoding: unit}
	}
	// Search for the largest k that fits. Counting a large catalog is
	// slow, so the search starts from an estimate (the frame's exact count
	// plus each skill's line counted alone) and gallops from there; every
	// answer is still counted exactly. Token counts grow with k almost
	// everywhere; where they do not, the result still fits, it may just
	// keep one skill fewer than possible.
	lo, hi := 0, len(entries)-1 // k = lo fits; k = len(entries) did not.
	est, err := f.estimate(best.Tokens, entries, order)
	if err != nil {
		return Fitted{}, err
	}
	if est = min(est, hi); est > lo {
		fit, ok, err := f.try(keep(est), limit)
		if err != nil {
			return Fitted{}, err
		}
		if ok {
			lo, best = est, fit
			for step := 1; lo < hi; step *= 2 {
				k := min(lo+step, hi)
				fit, ok, err := f.try(keep(k), limit)
				if err != nil {
					return Fitted{}, err
				}
				if !ok {
					hi = k - 1
					break
				}
				lo, best = k, fit
			}
		} else {
			hi = est - 1
			for step := 1; lo < hi; step *= 2 {
				k := max(hi-step+1, lo+1)
				fit, ok, err := f.try(keep(k), limit)
				if err != nil {
					return Fitted{}, err
				}
				if ok {
					lo, best = k, fit
					break
				}
				hi = k - 1
			}
		}
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		fit, ok, err := f.try(keep(mid), limit)
		if err != nil {
			return Fitted{}, err
		}
		if ok {
			lo, best = mid, fit
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}

// estimate guesses how many skills, taken in order, fit in the budget:
// base is the exact count with none shown, and each skill adds the count of
// its reminder line on its own.
func (f *fitter) estimate(base int, entries []Entry, order []int) (int, error) {
	total := base
	for k, i := range order {
		e := entries[i]
		n, err := f.count("- `" + e.Name + "`: " + e.Description + "\n")
		if err != nil {
			return 0, err
		}
		if total += n; total > f.max {
			return k, nil
		}
	}
	return len(order), nil
}

// fitter renders and measures one candidate at a time.
type fitter struct {
	c     *Catalog
	r     Renderer
	count func(string) (int, error) // tokens or characters
	max   int
}

// try renders req and reports whether it fits the budget. The returned
// Fitted carries the token count even when it does not fit.
func (f *fitter) try(req Request, limit int) (Fitted, bool, error) {
	text := f.r.Render(req)
	if note := req.Note(); note != "" && !strings.Contains(text, note) {
		return Fitted{}, false, fmt.Errorf("%w: a custom Renderer must write Request.Note() when Request.Omitted is not zero", ErrNoteMissing)
	}
	n, err := f.count(text)
	if err != nil {
		return Fitted{}, false, err
	}
	fit := Fitted{Text: text, Tokens: n, DescriptionMaxLength: limit, Shown: len(req.Entries), Omitted: req.Omitted}
	return fit, n <= f.max, nil
}

// check validates the budget and returns the description floor.
func (b Budget) check() (int, error) {
	switch {
	case b.MaxTokens < 0 || b.MaxChars < 0:
		return 0, fmt.Errorf("%w: Budget.MaxTokens is %d and MaxChars %d; a budget is positive", ErrInvalidBudget, b.MaxTokens, b.MaxChars)
	case b.MaxTokens > 0 && b.MaxChars > 0:
		return 0, fmt.Errorf("%w: Budget sets both MaxTokens (%d) and MaxChars (%d); set one of them", ErrInvalidBudget, b.MaxTokens, b.MaxChars)
	case b.MaxTokens == 0 && b.MaxChars == 0:
		return 0, fmt.Errorf("%w: Budget.MaxTokens is 0; set it to a positive number of tokens (or MaxChars to characters)", ErrInvalidBudget)
	}
	switch {
	case b.MinDescriptionLength == 0:
		return DefaultMinDescriptionLength, nil
	case b.MinDescriptionLength < MinDescriptionMaxLength:
		return 0, fmt.Errorf("%w: Budget.MinDescriptionLength is %d; use 0 for the default (%d) or a value of 3 or more",
			ErrInvalidBudget, b.MinDescriptionLength, DefaultMinDescriptionLength)
	}
	return b.MinDescriptionLength, nil
}

// capLadder lists the caps to try: top, then halving, ending at floor.
// When top is at or below floor there is only top.
func capLadder(top, floor int) []int {
	ladder := []int{top}
	for c := top; c > floor; {
		c = max(c/2, floor)
		ladder = append(ladder, c)
	}
	return ladder
}

// entriesAt re-runs the description pipeline with a lower cap.
func (c *Catalog) entriesAt(limit int) []Entry {
	if limit >= c.max {
		return c.entries
	}
	out := make([]Entry, len(c.entries))
	for i, e := range c.entries {
		e.Description = string(appendDescription(nil, e.Summary.Description, limit))
		out[i] = e
	}
	return out
}

// dropOrder returns entry indexes best first: the recently used in their
// order, then lowest Rank, then byte order of name. Keeping a prefix of it
// keeps the best skills.
func dropOrder(entries []Entry, recent []string) []int {
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	pos := make(map[string]int, len(recent))
	for i, n := range recent {
		if _, dup := pos[n]; !dup {
			pos[n] = i
		}
	}
	rank := func(i int) int {
		if p, ok := pos[entries[i].Name]; ok {
			return p
		}
		return len(recent)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(
			cmp.Compare(rank(a), rank(b)),
			cmp.Compare(entries[a].Summary.Rank, entries[b].Summary.Rank),
			strings.Compare(entries[a].Name, entries[b].Name),
		)
	})
	return order
}
