package cli_test

import (
	"context"
	"os"

	"github.com/skillkit/skillkit/internal/cli"
)

// Example runs `skillkit catalog --format list` on the bundled skills
// in-process, the way tests drive every command.
func Example() {
	code := cli.Run(context.Background(),
		[]string{"catalog", "--format", "list", "--max-description", "40", "../../examples/skills"},
		cli.Env{Stdout: os.Stdout, Stderr: os.Stderr})
	if code != 0 {
		os.Exit(code)
	}
	// Output:
	// Available skills:
	// - api-style-guide: House rules for designing and reviewi...
	// - csv-stats: Summarise CSV files (row count, per-c...
	// - unicode-notes: Explains Unicode pitfalls in text pro...
}
