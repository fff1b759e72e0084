package sandbox

// HeadTail is an io.Writer that keeps at most Limit bytes: the first half
// and the most recent half of everything written, dropping the middle. It
// never fails a write, so a chatty process is not killed by SIGPIPE; the
// Truncated flag says that bytes were dropped. The zero value keeps nothing;
// use NewHeadTail. It is not safe for concurrent use.
type HeadTail struct {
	limit   int
	head    []byte
	tail    []byte // ring buffer of the last tailCap bytes
	tailPos int    // next write position in tail once it is full
	total   int64
}

// NewHeadTail returns a HeadTail keeping at most limit bytes (limit/2 from
// the start, the rest from the end). A limit <= 0 keeps nothing.
func NewHeadTail(limit int) *HeadTail {
	if limit < 0 {
		limit = 0
	}
	return &HeadTail{limit: limit}
}

// headCap is the number of leading bytes kept.
func (h *HeadTail) headCap() int { return h.limit / 2 }

// tailCap is the number of trailing bytes kept.
func (h *HeadTail) tailCap() int { return h.limit - h.limit/2 }

// Write keeps what fits and always reports len(p) bytes written.
func (h *HeadTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.headCap() - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	tc := h.tailCap()
	if len(p) == 0 || tc == 0 {
		return n, nil
	}
	if len(p) >= tc {
		// Only the last tc bytes of p survive.
		h.tail = append(h.tail[:0], p[len(p)-tc:]...)
		h.tailPos = 0
		return n, nil
	}
	if room := tc - len(h.tail); room > 0 {
		k := min(room, len(p))
		h.tail = append(h.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(h.tail[h.tailPos:], p)
		p = p[k:]
		h.tailPos = (h.tailPos + k) % tc
	}
	return n, nil
}

// Bytes returns the kept bytes: the head followed by the tail in order.
func (h *HeadTail) Bytes() []byte {
	out := make([]byte, 0, len(h.head)+len(h.tail))
	out = append(out, h.head...)
	out = append(out, h.tail[h.tailPos:]...)
	out = append(out, h.tail[:h.tailPos]...)
	return out
}

// Truncated reports whether bytes were dropped.
func (h *HeadTail) Truncated() bool { return h.total > int64(len(h.head)+len(h.tail)) }

// Len returns the total number of bytes written, kept or not.
func (h *HeadTail) Len() int64 { return h.total }
