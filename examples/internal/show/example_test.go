package show_test

import (
	"fmt"

	"github.com/skillkit/skillkit/examples/internal/show"
)

func Example() {
	fmt.Println(show.Line("a  long\nanswer text", 10), show.YesNo(true))
	// Output: a long an… yes
}
