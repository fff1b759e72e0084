package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/sandbox"
)

// The example runs as its comment says and prints what the scripted model
// was given and what its calls returned.
func TestLoop(t *testing.T) {
	r, err := sandbox.NewIsolated(nil)
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		t.Skipf("the example's sandbox needs %s: %v", fe.Feature, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
	t.Chdir("../..")
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = out
	main()
	os.Stdout = stdout
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		`2 messages, 9 tools → "<skill_content name=\"csv-stats\">`,
		`4 messages, 9 tools → "{\"exit_code\":0,\"stdout\":\"{\\n  \\\"columns\\\"`,
		`6 messages, 9 tools → "The sample CSV has 3 rows."`,
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", b)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %s\nwant a line starting %s", i+1, lines[i], w)
		}
	}
}
