package redisstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/redisstore"
)

// Sessions in a local Redis, under a prefix of the application's own,
// expiring after a day without use. (Not run by go test: it needs a
// server on 127.0.0.1:6379.)
func Example() {
	ctx := context.Background()
	st, err := redisstore.Open(ctx, &redisstore.Options{Addr: "127.0.0.1:6379", Prefix: "myapp:", IdleTTL: 24 * time.Hour})
	if err != nil {
		log.Fatal(err) // names the server and what to check
	}
	defer st.Close()

	s, err := st.Create(ctx, "", map[string]string{"mode": "session"})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = st.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Agent: "assistant", Text: "load pdf"})
	_, _ = st.Append(ctx, s.ID, session.Event{Kind: session.KindState, Agent: "assistant",
		StateDelta: map[string]*string{"loaded/pdf": session.Ptr("1")}, Loads: []session.Load{{Skill: "pdf", Instructions: true}}})

	got, _ := st.Get(ctx, s.ID)
	fmt.Println(got.Meta["mode"], len(got.Events), got.Turn(), got.State)
}

// A server that needs a password or TLS is reached through a client the
// application configures; the store leaves it open on Close.
func ExampleOpen_client() {
	ctx := context.Background()
	opts, err := redis.ParseURL("rediss://user:secret@redis.example.com:6380/2")
	if err != nil {
		log.Fatal(err)
	}
	opts.ContextTimeoutEnabled = true // context deadlines bound network waits
	client := redis.NewClient(opts)
	defer client.Close()

	st, err := redisstore.Open(ctx, &redisstore.Options{Client: client, Prefix: "myapp:"})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
}
