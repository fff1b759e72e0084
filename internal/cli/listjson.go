package cli

import (
	"bufio"
	"io"
	"runtime"
	"strconv"
	"sync"
	"unicode/utf8"
)

// writeListJSON writes items exactly as printJSON writes the slice — two
// spaces of indentation, HTML characters as they are — byte for byte
// (TestListJSONAsPrintJSON), without reflection. Blocks of items are
// encoded in parallel into buffers reused from round to round and written
// in order: encoding/json spent more time on the ten thousand objects of
// a large `list --json` than listing their files did, one core idle, and
// building the output whole cost a process its size again in fresh pages.
func writeListJSON(w io.Writer, items []listItem) error {
	n := len(items)
	if n == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	k := max(1, min(runtime.GOMAXPROCS(0), n/listJSONBlock))
	bufs := make([][]byte, k)
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("[\n")
	for lo := 0; lo < n; lo += k * listJSONBlock {
		var wg sync.WaitGroup
		used := 0
		for c := range k {
			start := lo + c*listJSONBlock
			if start >= n {
				break
			}
			end := min(start+listJSONBlock, n)
			used++
			wg.Go(func() {
				b := bufs[c][:0]
				for i := start; i < end; i++ {
					if i > 0 {
						b = append(b, ",\n"...)
					}
					b = items[i].appendJSON(b)
				}
				bufs[c] = b
			})
		}
		wg.Wait()
		for _, b := range bufs[:used] {
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
}

// listJSONBlock is how many items one worker of writeListJSON encodes at
// a time: large enough that handing out work costs nothing, small enough
// that the buffers stay in the cache.
const listJSONBlock = 256

// appendJSON appends the item as an element of writeListJSON's array:
// its fields in declaration order, the omitempty ones only when set.
func (it *listItem) appendJSON(b []byte) []byte {
	b = append(b, "  {\n    \"name\": "...)
	b = appendJSONString(b, it.Name)
	b = append(b, ",\n    \"description\": "...)
	b = appendJSONString(b, it.Description)
	b = append(b, ",\n    \"path\": "...)
	b = appendJSONString(b, it.Path)
	b = append(b, ",\n    \"source\": "...)
	b = appendJSONString(b, it.Source)
	b = append(b, ",\n    \"rank\": "...)
	b = strconv.AppendInt(b, int64(it.Rank), 10)
	b = append(b, ",\n    \"model_invocable\": "...)
	b = strconv.AppendBool(b, it.ModelInvocable)
	b = append(b, ",\n    \"user_invocable\": "...)
	b = strconv.AppendBool(b, it.UserInvocable)
	b = append(b, ",\n    \"files\": "...)
	b = strconv.AppendInt(b, int64(it.Files), 10)
	b = append(b, ",\n    \"bytes\": "...)
	b = strconv.AppendInt(b, it.Bytes, 10)
	b = append(b, ",\n    \"docs\": "...)
	b = strconv.AppendInt(b, int64(it.Docs), 10)
	if it.FilesTruncated {
		b = append(b, ",\n    \"files_truncated\": true"...)
	}
	if it.ShadowedBy != "" {
		b = append(b, ",\n    \"shadowed_by\": "...)
		b = appendJSONString(b, it.ShadowedBy)
	}
	if it.Error != "" {
		b = append(b, ",\n    \"error\": "...)
		b = appendJSONString(b, it.Error)
	}
	return append(b, "\n  }"...)
}

// appendJSONString appends s as a JSON string the way encoding/json
// writes it with HTML escaping off: quotes, backslashes and control
// characters escaped (\b, \f, \n, \r, \t, else \u00XX), invalid UTF-8 as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029, everything else as it
// is. FuzzAppendJSONString holds it to encoding/json.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
