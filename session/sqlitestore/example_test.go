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
		StateDelta: map[string]*string{session.LoadedKey("assistant", "pdf"): session.Ptr(session.LoadedValue)}})
	st.Close()

	st, _ = sqlitestore.Open(ctx, path, nil)
	defer st.Close()
	s, _ := st.Get(ctx, "chat-1")
	fmt.Println(s.Meta["mode"], len(s.Events), s.Turn())
	fmt.Println(session.LoadedSkills(s.State, "assistant"))
	// Output:
	// session 2 1
	// [pdf]
}
