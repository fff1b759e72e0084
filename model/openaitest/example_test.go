package openaitest_test

import (
	"context"
	"fmt"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
)

// A test server for a client that speaks Chat Completions: it plays the
// script, checks each request against the step's expectations, records
// the bodies as received and, without a scripted usage, reports as cached
// the prefix a request shares with the one before.
func Example() {
	srv, err := openaitest.New(&scripted.Script{Steps: []scripted.Step{
		{Expect: &scripted.Expect{LastRole: "user"}, Text: "Hi!"},
		{Expect: &scripted.Expect{LastContains: "again"}, Text: "Hi again!"},
	}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	m, _ := openai.New(&openai.Options{BaseURL: srv.URL, Model: "any"})

	ctx := context.Background()
	req := &model.Request{Messages: []assembly.Message{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "hello"}}}
	first, _ := model.Collect(m.Stream(ctx, req))
	req.Messages = append(req.Messages, assembly.Message{Role: "assistant", Content: first.Text}, assembly.Message{Role: "user", Content: "hello again"})
	second, _ := m.Generate(ctx, req)

	ex := srv.Exchanges()
	fmt.Println(first.Text, second.Text, ex[0].Stream, ex[1].Stream)
	fmt.Println(second.Usage.CachedPromptTokens > 0, second.Usage.PromptTokens == len(ex[1].Body))
	fmt.Println(srv.Err(), srv.Done())
	// Output:
	// Hi! Hi again! true false
	// true true
	// <nil> <nil>
}
