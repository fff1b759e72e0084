package redisstore

import (
	"context"
	"time"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/driver"
)

// KeepAcks is how many recent writes a session remembers for resends.
const KeepAcks = keepAcks

// AppendWithToken appends ev (no hook) as a write under token, as a
// client resending a command repeats it, and returns its Seq.
func AppendWithToken(ctx context.Context, st *Store, id, token string, ev session.Event) (int64, error) {
	e, err := driver.Prepare(ev, time.Now())
	if err != nil {
		return 0, err
	}
	rec, err := encode(&e)
	if err != nil {
		return 0, err
	}
	seq, _, err := st.write(ctx, id, token, nil, []pending{{e.Kind.StartsTurn(), rec, e.StateDelta}})
	return seq, err
}
