package redisstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/skillkit/skillkit/session"
)

// Every change to a session is one Lua script: Redis runs a script alone,
// so its reads and writes are one atomic step, and with appendfsync always
// the step is on disk before the reply is sent.

// touchLua sets the expiry of the keys it is given (all of one session) to
// the same instant, so they expire together: ttl milliseconds from the
// server's clock, or never when ttl is 0 and persist is set.
const touchLua = `
local function touch(ttl, persist, first, last)
	if ttl > 0 then
		local t = redis.call('TIME')
		local at = string.format('%.0f', t[1] * 1000 + math.floor(t[2] / 1000) + ttl)
		for i = first, last do redis.call('PEXPIREAT', KEYS[i], at) end
	elseif persist then
		for i = first, last do redis.call('PERSIST', KEYS[i]) end
	end
end
`

// createScript: KEYS session, events, state, acks, index; ARGV id,
// created (ns), score (ms), meta JSON, ttl (ms), token. Returns 1, or 0
// when the session exists; 1 also when it exists because this very call
// (its token) made it, for a command resent after a lost reply. Leftovers
// of an expired session are removed first.
var createScript = redis.NewScript(touchLua + `
if redis.call('EXISTS', KEYS[1]) == 1 then
	if redis.call('HGET', KEYS[1], 'creator') == ARGV[6] then return 1 end
	return 0
end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'created', ARGV[2], 'meta', ARGV[4], 'seq', '0', 'turn', '0', 'creator', ARGV[6])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
touch(tonumber(ARGV[5]), true, 1, 1)
return 1
`)

// readScript: KEYS session, events, state, acks; ARGV ttl (ms), "1" to
// return the events. Returns nil for a missing session, else {created,
// meta, seq, turn, events, state as field, value, ...}.
var readScript = redis.NewScript(touchLua + `
local h = redis.call('HMGET', KEYS[1], 'created', 'meta', 'seq', 'turn')
if not h[1] then return false end
touch(tonumber(ARGV[1]), false, 1, 4)
local events = {}
if ARGV[2] == '1' then events = redis.call('LRANGE', KEYS[2], 0, -1) end
return {h[1], h[2], h[3], h[4], events, redis.call('HGETALL', KEYS[3])}
`)

// appendScript: KEYS session, events, state, acks; ARGV token, ttl (ms),
// expected created (empty for any), expected seq, event count, then per
// event: "1" when it starts a turn, its record (a JSON object without seq
// and turn), the number of keys it sets followed by key, value pairs, the
// number it deletes followed by the keys.
//
// Returns {"ok", "<first seq> <turn>..."}, {"missing"} or {"conflict"}
// (the session is not at the expected position). A token already
// acknowledged returns that write's result again without writing: a
// command resent after a lost reply is stored once.
var appendScript = redis.NewScript(touchLua + `
for _, a in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
	if string.sub(a, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then
		return {'ok', string.sub(a, #ARGV[1] + 2)}
	end
end
local h = redis.call('HMGET', KEYS[1], 'created', 'seq', 'turn')
if not h[1] then return {'missing'} end
if ARGV[3] ~= '' and (h[1] ~= ARGV[3] or h[2] ~= ARGV[4]) then return {'conflict'} end
local seq, turn = tonumber(h[2]), tonumber(h[3])
local ack = {string.format('%.0f', seq + 1)}
local i = 6
for _ = 1, tonumber(ARGV[5]) do
	seq = seq + 1
	if ARGV[i] == '1' then turn = turn + 1 end
	ack[#ack + 1] = string.format('%.0f', turn)
	redis.call('RPUSH', KEYS[2], string.format('{"seq":%.0f,"turn":%.0f,', seq, turn) .. string.sub(ARGV[i + 1], 2))
	i = i + 2
	local n = tonumber(ARGV[i])
	for j = 1, n do redis.call('HSET', KEYS[3], ARGV[i + 2 * j - 1], ARGV[i + 2 * j]) end
	i = i + 2 * n + 1
	n = tonumber(ARGV[i])
	for j = 1, n do redis.call('HDEL', KEYS[3], ARGV[i + j]) end
	i = i + n + 1
end
redis.call('HSET', KEYS[1], 'seq', string.format('%.0f', seq), 'turn', string.format('%.0f', turn))
local result = table.concat(ack, ' ')
redis.call('LPUSH', KEYS[4], ARGV[1] .. ' ' .. result)
redis.call('LTRIM', KEYS[4], 0, ` + fmt.Sprint(keepAcks-1) + `)
touch(tonumber(ARGV[2]), true, 1, 4)
return {'ok', result}
`)

// deleteScript: KEYS session, events, state, acks, index; ARGV id.
// Returns 1, or 0 when there is no such session.
var deleteScript = redis.NewScript(`
local found = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
return found
`)

// pruneScript: KEYS index, then the session keys of ARGV's IDs. Drops
// from the index the IDs whose session key is gone (expired), unless a
// Create brought them back meanwhile.
var pruneScript = redis.NewScript(`
for i, id in ipairs(ARGV) do
	if redis.call('EXISTS', KEYS[i + 1]) == 0 then redis.call('ZREM', KEYS[1], id) end
end
return 0
`)

// keepAcks is how many recent writes a session remembers for resends.
// A client resends within a second of a lost reply; 64 writes to one
// session in that time would be unusual.
const keepAcks = 64

// record is an event as stored, without the seq and turn the append
// script writes in front of it.
type record struct {
	ID         string             `json:"id"`
	Time       time.Time          `json:"time"`
	Agent      string             `json:"agent,omitempty"`
	Kind       session.Kind       `json:"kind"`
	Text       string             `json:"text,omitempty"`
	ToolCalls  []session.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string             `json:"tool_call_id,omitempty"`
	ToolName   string             `json:"tool_name,omitempty"`
	IsError    bool               `json:"is_error,omitempty"`
	StateDelta map[string]*string `json:"state_delta,omitempty"`
	Loads      []session.Load     `json:"loads,omitempty"`
	Summarizes int64              `json:"summarizes,omitempty"`
}

// storedRecord is an element of the events list.
type storedRecord struct {
	Seq  int64 `json:"seq"`
	Turn int   `json:"turn"`
	record
}

// encode returns the record of e. Its first field is the ID, which is
// never empty, so the script can put seq and turn before it.
func encode(e *session.Event) ([]byte, error) {
	return json.Marshal(record{ID: e.ID, Time: e.Time, Agent: e.Agent, Kind: e.Kind, Text: e.Text, ToolCalls: e.ToolCalls,
		ToolCallID: e.ToolCallID, ToolName: e.ToolName, IsError: e.IsError, StateDelta: e.StateDelta, Loads: e.Loads, Summarizes: e.Summarizes})
}

// decode reads an element of the events list; want is the Seq its
// position says it has.
func decode(data string, want int64) (session.Event, error) {
	var r storedRecord
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return session.Event{}, fmt.Errorf("event %d: corrupt record: %w", want, err)
	}
	if r.Seq != want {
		return session.Event{}, fmt.Errorf("event %d: the record says seq %d; the events list was changed outside the store", want, r.Seq)
	}
	return session.Event{Seq: r.Seq, ID: r.ID, Time: r.Time.UTC(), Agent: r.Agent, Kind: r.Kind, Text: r.Text, ToolCalls: r.ToolCalls,
		ToolCallID: r.ToolCallID, ToolName: r.ToolName, IsError: r.IsError, Turn: r.Turn, StateDelta: r.StateDelta, Loads: r.Loads,
		Summarizes: r.Summarizes}, nil
}
