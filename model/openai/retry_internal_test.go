package openai

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &Model{retry: Retry{Now: func() time.Time { return now }}}
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		named  bool
	}{
		{"none", http.Header{}, 0, false},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {" 2.5 "}}, 2500 * time.Millisecond, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, true},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond, true},
		{"bad milliseconds fall back", http.Header{"Retry-After-Ms": {"soon"}, "Retry-After": {"9"}}, 9 * time.Second, true},
		{"HTTP date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"RFC 850 date", http.Header{"Retry-After": {now.Add(time.Minute).Format(time.RFC850)}}, time.Minute, true},
		{"a date past", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"negative", http.Header{"Retry-After": {"-4"}}, 0, false},
		{"absurd", http.Header{"Retry-After": {"1e300"}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"tomorrow"}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, named := m.retryAfter(&attempt{header: tt.header})
			if got != tt.want || named != tt.named {
				t.Errorf("retryAfter = %s, %v; want %s, %v", got, named, tt.want, tt.named)
			}
		})
	}
}

func TestDefaultBackoff(t *testing.T) {
	for n := 1; n <= 40; n++ {
		full := DefaultMaxDelay
		if n < 16 {
			full = min(DefaultBaseDelay<<(n-1), DefaultMaxDelay)
		}
		for range 50 {
			if d := defaultBackoff(n); d < full/2 || d > full {
				t.Fatalf("defaultBackoff(%d) = %s; want within [%s, %s]", n, d, full/2, full)
			}
		}
	}
}
