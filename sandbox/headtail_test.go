package sandbox

import (
	"bytes"
	"testing"
)

// reference computes what HeadTail must keep for data written at once.
func reference(data []byte, limit int) []byte {
	if len(data) <= limit {
		return data
	}
	h := limit / 2
	return append(append([]byte(nil), data[:h]...), data[len(data)-(limit-h):]...)
}

func TestHeadTail(t *testing.T) {
	cases := []struct {
		name   string
		limit  int
		chunks []string
		want   string
		trunc  bool
	}{
		{"empty", 8, nil, "", false},
		{"under limit", 8, []string{"abc"}, "abc", false},
		{"exactly at limit", 8, []string{"abcd", "efgh"}, "abcdefgh", false},
		{"one over limit", 8, []string{"abcdefghi"}, "abcdfghi", true},
		{"many small writes", 4, []string{"a", "b", "c", "d", "e", "f"}, "abef", true},
		{"big then small", 6, []string{"0123456789", "ab"}, "01289ab"[:3] + "9ab", true},
		{"zero limit", 0, []string{"abc"}, "", true},
		{"odd limit", 5, []string{"0123456789"}, "0156789"[:2] + "789", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHeadTail(tc.limit)
			total := 0
			for _, c := range tc.chunks {
				n, err := h.Write([]byte(c))
				if err != nil || n != len(c) {
					t.Fatalf("Write = %d, %v", n, err)
				}
				total += n
			}
			if got := string(h.Bytes()); got != tc.want {
				t.Errorf("Bytes = %q, want %q", got, tc.want)
			}
			if h.Truncated() != tc.trunc {
				t.Errorf("Truncated = %v, want %v", h.Truncated(), tc.trunc)
			}
			if h.Len() != int64(total) {
				t.Errorf("Len = %d, want %d", h.Len(), total)
			}
		})
	}
}

func FuzzHeadTail(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(5), uint8(3))
	f.Add(bytes.Repeat([]byte("x"), 100), uint8(16), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, limit, chunk uint8) {
		h := NewHeadTail(int(limit))
		step := int(chunk) + 1
		for i := 0; i < len(data); i += step {
			_, _ = h.Write(data[i:min(i+step, len(data))])
		}
		want := reference(data, int(limit))
		if got := h.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("limit %d chunk %d: got %q want %q", limit, step, got, want)
		}
		if h.Truncated() != (len(data) > int(limit)) {
			t.Fatalf("Truncated = %v for %d bytes, limit %d", h.Truncated(), len(data), limit)
		}
	})
}
