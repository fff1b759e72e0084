package tools_test

import (
	"encoding/json"
	"fmt"

	"github.com/skillkit/skillkit/tools"
)

// An extra tool decodes its arguments as strictly as the built-in ones: a
// key given twice is refused, with its path, instead of the last one
// silently winning.
func ExampleDecodeArgs() {
	var args struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	err := tools.DecodeArgs(json.RawMessage(`{"items":[{"name":"a"},{"name":"b","name":"c"}]}`), &args)
	fmt.Println(err)
	// Output:
	// duplicate key "name" in items[1] (give each key once)
}
