package catalog

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestNewCounter(t *testing.T) {
	tests := []struct {
		encoding, want string
	}{
		{"", DefaultEncoding},
		{"o200k_base", "o200k_base"},
		{"cl100k_base", "cl100k_base"},
		{"r50k_base", "r50k_base"},
	}
	for _, tt := range tests {
		c, err := NewCounter(tt.encoding)
		if err != nil {
			t.Fatalf("NewCounter(%q): %v", tt.encoding, err)
		}
		if c.Encoding() != tt.want {
			t.Errorf("NewCounter(%q).Encoding() = %q, want %q", tt.encoding, c.Encoding(), tt.want)
		}
	}
	for _, bad := range []string{"o200k", "gpt-4o", "O200K_BASE", "gpt2"} {
		_, err := NewCounter(bad)
		if !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("NewCounter(%q): err = %v, want ErrUnknownEncoding", bad, err)
		} else if !strings.Contains(err.Error(), "o200k_base") {
			t.Errorf("error %q does not say which encodings exist", err)
		}
	}
}

func TestCounterCount(t *testing.T) {
	c, err := NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"hello world hello world", 4},
	}
	for _, tt := range tests {
		got, err := c.Count(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestCounterConcurrent(t *testing.T) {
	c, err := NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"<system-reminder>\nA skill is a reusable set of task-specific instructions.",
		"处理中文文档：提取、总结和翻译。",
		"Ship it 🚀🚀🚀 with 𝒻𝒶𝓃𝒸𝓎 letters & <markup>",
	}
	want := make([]int, len(texts))
	for i, s := range texts {
		if want[i], err = c.Count(s); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(texts))
	for range 8 {
		for i, s := range texts {
			wg.Go(func() {
				n, err := c.Count(s)
				if err == nil && n != want[i] {
					err = errors.New("concurrent count differs from the sequential one for " + s)
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
