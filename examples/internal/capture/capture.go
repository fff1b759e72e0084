// Package capture runs an example's main for its test, from the
// repository root as the example's doc comment says to run it, and
// returns what it printed.
package capture

import (
	"os"
	"testing"
)

// Main changes to the repository root (two levels above the example's
// folder) for the rest of the test, runs main with os.Stdout sent to a
// file, and returns what main wrote there.
func Main(t *testing.T, main func()) string {
	t.Helper()
	t.Chdir("../..")
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdout := os.Stdout
	os.Stdout = f
	func() {
		defer func() { os.Stdout = stdout }() // also when main panics
		main()
	}()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
