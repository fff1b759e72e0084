package termtext_test

import (
	"fmt"

	"github.com/skillkit/skillkit/internal/termtext"
)

// A skill description that would retitle the terminal and reverse the
// rest of the line is shown with its control characters visible.
func ExampleEscape() {
	fmt.Println(termtext.Escape("Extracts text\x1b]0;pwned\x07 from \u202eFDP files"))
	// Output:
	// Extracts text\x1b]0;pwned\x07 from \u202eFDP files
}
