// Package show formats what the examples print: one-line, bounded texts
// and yes/no answers, the same way in every example.
package show

import "strings"

// Line puts s on one line (runs of white space become one space) and cuts
// it to n characters, ending a cut text with "…".
func Line(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// YesNo is "yes" for true and "no" for false.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
