package sqlitestore

// CachedSessions lists the sessions st keeps in memory, most recently
// used first, so tests can see eviction without timing anything.
func CachedSessions(st *Store) []string { return st.cache.ids() }
