package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestListJSONAsPrintJSON holds writeListJSON to printJSON: the same
// bytes for no item, for items with every field set (so a field added to
// listItem and not to appendJSON fails here) and without the omitempty
// ones, and for strings that need escaping.
func TestListJSONAsPrintJSON(t *testing.T) {
	full := listItem{Name: "pdf", Description: "Reads <PDF> & more", Path: "/s/pdf", Source: "project", Rank: 2,
		ModelInvocable: true, UserInvocable: true, Files: 3, Bytes: 1234, Docs: 1, FilesTruncated: true,
		ShadowedBy: "/t/pdf", Error: "reading \"x\"\n\tfailed"}
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("listItem.%s is not set in the test item; set it", v.Type().Field(i).Name)
		}
	}
	for _, c := range []struct {
		name  string
		items []listItem
	}{
		{"none", []listItem{}},
		{"every field", []listItem{full}},
		{"omitempty fields unset, negative rank", []listItem{{Name: "a", Rank: -1}, {Name: "b", Description: "d"}}},
		{"escapes", []listItem{{Name: "x", Description: "\x00\x01\x1f\x7f\b\f\n\r\t\"\\/ \u2028\u2029 é 🙂 \xff\xfe end", Path: "\u00e9\u0301"}}},
		{"many", []listItem{full, {Name: "b"}, full}},
		// Several rounds of blocks, the last one partial.
		{"blocks", manyItems(5*listJSONBlock + 7)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want, got bytes.Buffer
			if err := printJSON(&want, c.items); err != nil {
				t.Fatal(err)
			}
			if err := writeListJSON(&got, c.items); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("writeListJSON:\n%s\nprintJSON:\n%s", got.String(), want.String())
			}
		})
	}
}

// manyItems returns n distinct items.
func manyItems(n int) []listItem {
	items := make([]listItem, n)
	for i := range items {
		items[i] = listItem{Name: fmt.Sprintf("skill-%d", i), Rank: i, Files: i % 7}
	}
	return items
}

// FuzzAppendJSONString holds appendJSONString to encoding/json with HTML
// escaping off, for any string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "\x00\x1f\x7f", "\u2028\u2029", "\xff", "a\xe2\x80", "é🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := string(appendJSONString(nil, s)) + "\n"
		if got != want.String() {
			t.Errorf("appendJSONString(%q) = %s, encoding/json writes %s", s, got, want.String())
		}
	})
}
