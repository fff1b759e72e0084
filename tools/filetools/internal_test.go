package filetools

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// firstN must keep exactly the n smallest items, whatever the order and
// count it is given (below, at and past the compaction at 2n).
func TestFirstN(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10} {
		for _, count := range []int{0, 1, n - 1, n, n + 1, 2*n - 1, 2 * n, 2*n + 1, 7*n + 3} {
			in := make([]int, max(count, 0))
			for i := range in {
				in[i] = r.IntN(20)
			}
			keep := firstN[int]{n: n, cmp: func(a, b int) int { return a - b }}
			for _, v := range in {
				keep.add(v)
			}
			want := slices.Sorted(slices.Values(in))
			want = want[:min(n, len(want))]
			if got := keep.sorted(); !slices.Equal(got, want) || keep.total != len(in) {
				t.Errorf("n=%d, %d items: kept %v (total %d), want %v (total %d)", n, len(in), got, keep.total, want, len(in))
			}
		}
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{strings.Repeat("a", maxLineBytes), strings.Repeat("a", maxLineBytes)},
		{strings.Repeat("a", maxLineBytes+1), strings.Repeat("a", maxLineBytes) + "…"},
		{"a" + strings.Repeat("é", maxLineBytes/2), "a" + strings.Repeat("é", maxLineBytes/2-1) + "…"},
		{"bad \xff byte", "bad \uFFFD byte"},
	} {
		if got := clip([]byte(tt.in)); got != tt.want {
			t.Errorf("clip(%d bytes) = %q, want %q", len(tt.in), got, tt.want)
		}
	}
}
