package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// Sessions survive closing and reopening the file.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")

	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = st.Create(ctx, "chat-1", map[string]string{"mode": "session"})
	_, _ = st.Append(ctx, "chat-1", session.Event{Kind: session.KindUser, Agent: "assistant", Text: "load pdf"})
	_, _ = st.Append(ctx, "chat-1", session.Event{Kind: session.KindState, Agent: "assistant",
		StateDelta: map[string]*string{"loaded/pdf": session.Ptr("1")}, Loads: []session.Load{{Skill: "pdf", Instructions: true}}})
	st.Close()

	st, _ = sqlitestore.Open(ctx, path, nil)
	defer st.Close()
	s, _ := st.Get(ctx, "chat-1")
	fmt.Println(s.Meta["mode"], len(s.Events), s.Turn())
	fmt.Println(s.State, s.Events[1].Loads[0].Skill)
	// Output:
	// session 2 1
	// map[loaded/pdf:1] pdf
}
