package sqlitestore_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// childEnv marks a re-executed test binary as the crash-test writer; its
// value is the store path.
const childEnv = "SKILLKIT_SQLITESTORE_CRASH_CHILD"

var childSessions = []string{"crash-a", "crash-b"}

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		if err := appendForever(path); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashDelta is the state change of the event with the given seq; the
// parent recomputes it to check nothing was half-written.
func crashDelta(seq int64) map[string]*string {
	return map[string]*string{
		"counter":                     session.Ptr(strconv.FormatInt(seq, 10)),
		fmt.Sprintf("k%d", seq%5):     session.Ptr(fmt.Sprintf("v%d", seq)),
		fmt.Sprintf("k%d", (seq+2)%5): nil,
	}
}

// appendForever is the child: one goroutine per session appends until the
// parent kills the process, printing "<session> <seq>" after each Append
// returns (the acknowledgement the parent holds the store to).
func appendForever(path string) error {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	errs := make(chan error, len(childSessions))
	for _, id := range childSessions {
		go func() {
			if _, err := st.Create(ctx, id, nil); err != nil && !errors.Is(err, session.ErrExists) {
				errs <- err
				return
			}
			s, err := st.Get(ctx, id)
			if err != nil {
				errs <- err
				return
			}
			for seq := s.LastSeq() + 1; ; seq++ {
				ev, err := st.Append(ctx, id, session.Event{Kind: session.KindUser, Text: strconv.FormatInt(seq, 10), StateDelta: crashDelta(seq)})
				if err != nil {
					errs <- err
					return
				}
				if ev.Seq != seq {
					errs <- fmt.Errorf("%s: got seq %d, want %d", id, ev.Seq, seq)
					return
				}
				mu.Lock()
				fmt.Fprintf(out, "%s %d\n", id, seq)
				err = out.Flush()
				mu.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	return <-errs
}

func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary; skipped with -short")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	acked := map[string]int64{}
	const rounds = 3
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		readAck := func() bool {
			if !sc.Scan() {
				return false
			}
			id, seqText, ok := strings.Cut(sc.Text(), " ")
			seq, err := strconv.ParseInt(seqText, 10, 64)
			if !ok || err != nil {
				t.Fatalf("round %d: bad ack line %q", round, sc.Text())
			}
			if seq <= acked[id] {
				t.Fatalf("round %d: %s acked seq %d after %d", round, id, seq, acked[id])
			}
			acked[id] = seq
			return true
		}
		for n := 0; n < 40; n++ {
			if !readAck() {
				_ = cmd.Wait()
				t.Fatalf("round %d: child stopped after %d acks: %s", round, n, stderr.String())
			}
		}
		// Kill at an arbitrary point: the child is almost always inside an
		// append (it does nothing else).
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for readAck() {
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended with %v, want SIGKILL; stderr: %s", round, err, stderr.String())
		}
		checkCrashStore(t, path, acked)
	}
}

func checkCrashStore(t *testing.T, path string, acked map[string]int64) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check = %q, %v", integrity, err)
	}
	_ = db.Close()

	st := openStore(t, path, nil)
	for _, id := range childSessions {
		s, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("Get(%s) after crash: %v", id, err)
		}
		if s.LastSeq() < acked[id] {
			t.Fatalf("%s: store has %d events, child acknowledged %d", id, s.LastSeq(), acked[id])
		}
		state := map[string]string{}
		for i, ev := range s.Events {
			seq := int64(i + 1)
			if ev.Seq != seq || ev.Text != strconv.FormatInt(seq, 10) {
				t.Fatalf("%s: event %d has Seq %d Text %q", id, i, ev.Seq, ev.Text)
			}
			if diff := cmp.Diff(crashDelta(seq), ev.StateDelta); diff != "" {
				t.Fatalf("%s: event %d delta half-written (-want +got):\n%s", id, seq, diff)
			}
			session.ApplyDelta(state, ev.StateDelta)
		}
		if diff := cmp.Diff(state, s.State); diff != "" {
			t.Fatalf("%s: state is not the events' deltas applied in order (-fold +stored):\n%s", id, diff)
		}
		t.Logf("%s: %d acknowledged, %d stored", id, acked[id], s.LastSeq())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
