package loadstate_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
)

func TestActivateAndEndInvocation(t *testing.T) {
	key := loadstate.ActivatedKey("main")
	inv := func(set string) loadstate.Activation { return loadstate.Activation{Set: set} }
	sess := func(set string) loadstate.Activation {
		return loadstate.Activation{Set: set, Mode: loadstate.ActivateOnly, Lifetime: loadstate.ActivationSession}
	}
	for _, tc := range []struct {
		name    string
		before  string // the key's value; "" for absent
		add     []loadstate.Activation
		after   string // after Activate
		ended   string // after EndInvocation; "" for removed
		wantErr string
	}{
		{name: "first", add: []loadstate.Activation{inv("b"), sess("a")},
			after: `[{"set":"a","mode":"only","lifetime":"session"},{"set":"b","mode":"include","lifetime":"invocation"}]`,
			ended: `[{"set":"a","mode":"only","lifetime":"session"}]`},
		{name: "repeats count once", add: []loadstate.Activation{inv("b"), inv("b")},
			after: `[{"set":"b","mode":"include","lifetime":"invocation"}]`},
		{name: "already in effect", before: `[{"set":"b","mode":"include","lifetime":"invocation"}]`, add: []loadstate.Activation{inv("b")},
			after: `[{"set":"b","mode":"include","lifetime":"invocation"}]`},
		{name: "unreadable value is replaced", before: `not json`, add: []loadstate.Activation{sess("a")},
			after: `[{"set":"a","mode":"only","lifetime":"session"}]`, ended: `[{"set":"a","mode":"only","lifetime":"session"}]`},
		// Activate with nothing to add leaves the value alone; the next
		// turn's EndInvocation rewrites it readable.
		{name: "unknown entries are dropped", before: `[{"set":"x","mode":"sometimes","lifetime":"session"},{"set":"a","mode":"only","lifetime":"session"}]`,
			after: `[{"set":"x","mode":"sometimes","lifetime":"session"},{"set":"a","mode":"only","lifetime":"session"}]`, ended: `[{"set":"a","mode":"only","lifetime":"session"}]`},
		{name: "no set", add: []loadstate.Activation{{}}, wantErr: "activation 0 names no tool set"},
		{name: "bad mode", add: []loadstate.Activation{{Set: "a", Mode: 5}}, wantErr: "mode 5"},
		{name: "bad lifetime", add: []loadstate.Activation{{Set: "a", Lifetime: 5}}, wantErr: "lifetime 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := map[string]string{"other": "1"}
			if tc.before != "" {
				state[key] = tc.before
			}
			d, err := loadstate.Activate(state, "main", tc.add)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || d != nil {
					t.Fatalf("Activate: %v, %v; want an error containing %q", d, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.before == tc.after && d != nil {
				t.Fatalf("Activate changed nothing but returned %v", d)
			}
			session.ApplyDelta(state, d)
			if state[key] != tc.after {
				t.Fatalf("after Activate: %s; want %s", state[key], tc.after)
			}
			session.ApplyDelta(state, loadstate.EndInvocation(state, "main"))
			got, ok := state[key]
			if tc.ended == "" && ok || got != tc.ended {
				t.Fatalf("after EndInvocation: %q (present %v); want %q", got, ok, tc.ended)
			}
			if loadstate.EndInvocation(state, "main") != nil {
				t.Fatal("a second EndInvocation changes the state again")
			}
			if state["other"] != "1" {
				t.Fatal("another key changed")
			}
			want := []loadstate.Activation(nil)
			if tc.ended != "" {
				want = []loadstate.Activation{sess("a")}
			}
			if diff := cmp.Diff(want, loadstate.Of(state, "main").Activations(), cmp.Comparer(func(a, b []loadstate.Activation) bool {
				return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b))
			})); diff != "" {
				t.Fatalf("Activations (-want +got):\n%s", diff)
			}
		})
	}
}
