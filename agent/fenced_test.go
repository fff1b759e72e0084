package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCodeBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []CodeBlock
	}{
		{"none", "plain text\nno fences", nil},
		{"one bash block", "Run:\n```bash\nls -l\necho hi\n```\nDone.", []CodeBlock{{"bash", "ls -l\necho hi\n", true}}},
		{"info string words and case", "```Python title=x\nprint(1)\n```\n", []CodeBlock{{"python", "print(1)\n", true}}},
		{"tildes and a longer closing fence", "~~~sh\necho ~~\n~~~~\n", []CodeBlock{{"sh", "echo ~~\n", true}}},
		{"a shorter fence does not close", "````\n```\ninner\n```\n````\n", []CodeBlock{{"", "```\ninner\n```\n", true}}},
		{"unclosed block runs to the end", "```bash\necho a\n", []CodeBlock{{"bash", "echo a\n", false}}},
		{"indented up to three spaces", "   ```sh\n   pwd\n   ```\n", []CodeBlock{{"sh", "   pwd\n", true}}},
		{"four spaces is not a fence", "    ```sh\n    pwd\n    ```\n", nil},
		{"backtick in a backtick info string is not a fence", "```a`b\nx\n```\n", []CodeBlock{{"", "", false}}},
		{"two blocks", "```sh\na\n```\ntext\n```python\nb\n```", []CodeBlock{{"sh", "a\n", true}, {"python", "b\n", true}}},
		{"CRLF", "```sh\r\necho x\r\n```\r\n", []CodeBlock{{"sh", "echo x\r\n", true}}},
		{"closing fence with trailing text is content", "```sh\n```x\n```\n", []CodeBlock{{"sh", "```x\n", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CodeBlocks(tc.text)); diff != "" {
				t.Errorf("CodeBlocks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFencedCalls(t *testing.T) {
	text := "```bash\necho hi\n```\n```json\n{\"a\":1}\n```\n```python\nprint('SKILLKIT_PY')\n```\n```sh\n   \n```\n```sh\nrm -rf out/ke"
	calls := fencedCalls(text, "run")
	if len(calls) != 2 {
		t.Fatalf("calls %+v; want the bash and python blocks only (not the blank one, nor the unclosed one)", calls)
	}
	var cmds []string
	for _, c := range calls {
		var a struct{ Command string }
		if err := json.Unmarshal([]byte(c.Arguments), &a); err != nil || c.Name != "run" || c.ID != "" {
			t.Fatalf("call %+v: %v", c, err)
		}
		cmds = append(cmds, a.Command)
	}
	if cmds[0] != "echo hi\n" {
		t.Errorf("bash command %q", cmds[0])
	}
	if want := "python3 - <<'SKILLKIT_PY_'\nprint('SKILLKIT_PY')\nSKILLKIT_PY_\n"; cmds[1] != want {
		t.Errorf("python command %q; want %q (a delimiter the code does not hold)", cmds[1], want)
	}
}

// FuzzCodeBlocks: any text parses, each block's code is a part of the
// text, and the blocks come in order.
func FuzzCodeBlocks(f *testing.F) {
	for _, s := range []string{"```sh\nx\n```", "~~~\n~~~", "```\n", "   ````py\n```\n````", "a\n```b`\n```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rest := text
		for _, b := range CodeBlocks(text) {
			i := strings.Index(rest, b.Code)
			if i < 0 {
				t.Fatalf("block %q is not in the rest of the text %q", b.Code, rest)
			}
			rest = rest[i+len(b.Code):]
			if b.Lang != strings.ToLower(b.Lang) || strings.ContainsAny(b.Lang, " \n") {
				t.Fatalf("language %q", b.Lang)
			}
		}
	})
}
