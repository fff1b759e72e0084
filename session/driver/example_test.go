package driver_test

import (
	"fmt"
	"time"

	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/driver"
)

// A store's Append starts with Prepare: the event is validated, copied and
// given an ID and a time, ready for the store to number.
func ExamplePrepare() {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ev, err := driver.Prepare(session.Event{Kind: session.KindUser, Text: "hi", Seq: 7}, now)
	fmt.Println(err, len(ev.ID), ev.Time.Format(time.RFC3339), ev.Seq)

	_, err = driver.Prepare(session.Event{Kind: "note"}, now)
	fmt.Println(err != nil)
	fmt.Println(driver.CheckID("bad\nid") != nil)
	// Output:
	// <nil> 32 2026-12-01T09:00:00Z 0
	// true
	// true
}
