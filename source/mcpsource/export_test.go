package mcpsource

// ListedBytes returns the bytes of JSON the current listing took, for
// the test at Options.MaxListBytes.
func ListedBytes(r *Remote) int64 { return r.cat.Load().bytes }

// ProtocolVersion returns the protocol revision the session speaks.
func ProtocolVersion(r *Remote) string { return r.cs.InitializeResult().ProtocolVersion }
