package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillkit/skillkit/source"
)

// server serves test archives on 127.0.0.1 with ETag and Last-Modified,
// counting requests.
type server struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int // requests
	full  map[string]int // answers with the content (200)
}

func newServer(t testing.TB) *server {
	t.Helper()
	s := &server{files: map[string][]byte{}, hits: map[string]int{}, full: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, ok := s.files[r.URL.Path]
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		sum := sha256.Sum256(data)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		rec := &statusRecorder{ResponseWriter: w}
		http.ServeContent(rec, r, r.URL.Path, time.Unix(1700000000, 0), bytes.NewReader(data))
		if rec.status == http.StatusOK {
			s.mu.Lock()
			s.full[r.URL.Path]++
			s.mu.Unlock()
		}
	}))
	t.Cleanup(s.Close)
	return s
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *server) put(path string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = data
	return s.URL + path
}

func (s *server) counts(path string) (hits, full int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path], s.full[path]
}

// skillNames discovers the skills of src and returns their names.
func skillNames(t *testing.T, src source.Source) []string {
	t.Helper()
	res, err := source.Discover(context.Background(), src, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range res.Skills {
		names = append(names, f.Front.Name)
	}
	return names
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func TestOpenFormats(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct {
		path string
		data []byte
	}{
		{"/skills.zip", makeZip(t, twoSkills())},
		{"/skills.tar", makeTar(t, twoSkills(), false)},
		{"/skills.tar.gz", makeTar(t, twoSkills(), true)},
		{"/skills.tgz", makeTar(t, twoSkills(), true)},
		{"/download", makeZip(t, twoSkills())}, // the format is read from the bytes
	} {
		t.Run(tc.path, func(t *testing.T) {
			u := srv.put(tc.path, tc.data)
			src, err := Open(context.Background(), u, &Options{CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if src.Label != u {
				t.Errorf("label %q, want %q", src.Label, u)
			}
			if got := strings.Join(skillNames(t, src), ","); got != "alpha,beta" {
				t.Errorf("skills %q, want alpha,beta", got)
			}
			info, err := os.Stat(filepath.Join(src.Path, "repo-main/skills/alpha/scripts/run.sh"))
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm()&0o100 == 0 {
				t.Errorf("run.sh mode %v, want executable", info.Mode())
			}
		})
	}
}

func TestOpenLocalFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "skills.tar.gz")
	data := makeTar(t, twoSkills(), true)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	src, err := Open(context.Background(), file, &Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(skillNames(t, src), ","); got != "alpha,beta" {
		t.Errorf("skills %q", got)
	}
	// Pinned: the right pin opens the same tree, a wrong one is refused.
	again, err := Open(context.Background(), file+"#sha256="+strings.ToUpper(sha(data)), &Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if again.Path != src.Path {
		t.Errorf("same content unpacked again: %s, then %s", src.Path, again.Path)
	}
	_, err = Open(context.Background(), file+"#sha256="+strings.Repeat("0", 64), &Options{CacheDir: cache})
	if !errors.Is(err, ErrChecksum) {
		t.Errorf("wrong pin: %v, want ErrChecksum", err)
	}
	// A file changed in place gets a tree of its own.
	if err := os.WriteFile(file, makeTar(t, twoSkills()[:3], true), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := Open(context.Background(), file, &Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(skillNames(t, changed), ","); got != "alpha" {
		t.Errorf("changed file: skills %q, want alpha", got)
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "missing.zip"), &Options{CacheDir: cache}); err == nil || !strings.Contains(err.Error(), "missing.zip") {
		t.Errorf("missing file: %v", err)
	}
}

// lyingZip is a zip whose only entry declares size bytes and holds
// content, deflated.
func lyingZip(t *testing.T, name string, content []byte, size uint64) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(content)
	fw.Close()
	var out bytes.Buffer
	w := zip.NewWriter(&out)
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(content), CompressedSize64: uint64(comp.Len()), UncompressedSize64: size}
	raw, err := w.CreateRaw(h)
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(comp.Bytes())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestHostileArchives(t *testing.T) {
	srv := newServer(t)
	big := bytes.Repeat([]byte{0}, 5<<20)
	hugeTar := func() []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "huge.bin", Typeflag: tar.TypeReg, Size: 10 << 30, Mode: 0o644})
		buf.Write(make([]byte, 3<<20)) // far less than it says: never read as far
		return buf.Bytes()
	}
	lim := &Options{MaxFileBytes: 1 << 20, MaxFiles: 8, MaxBytes: 1000}
	for _, tc := range []struct {
		name  string
		data  []byte
		want  error
		entry string // the entry the error names, if any
	}{
		{"zip slip", makeZip(t, []entry{{name: "ok/SKILL.md", body: skillMD("ok")}, {name: "../../x", body: "pwned"}}), ErrUnsafePath, "../../x"},
		{"tar slip", makeTar(t, []entry{{name: "a/../../x", body: "pwned"}}, false), ErrUnsafePath, "a/../../x"},
		{"tgz slip", makeTar(t, []entry{{name: "../x", body: "pwned"}}, true), ErrUnsafePath, "../x"},
		{"zip absolute", makeZip(t, []entry{{name: "/etc/cron.d/x", body: "pwned"}}), ErrUnsafePath, "/etc/cron.d/x"},
		{"tar absolute", makeTar(t, []entry{{name: "/tmp/x", body: "pwned"}}, false), ErrUnsafePath, "/tmp/x"},
		{"zip drive", makeZip(t, []entry{{name: "C:/x", body: "pwned"}}), ErrUnsafePath, "C:/x"},
		{"zip backslash", makeZip(t, []entry{{name: `..\x`, body: "pwned"}}), ErrUnsafePath, `..\x`},
		{"zip symlink", makeZip(t, []entry{{name: "s/SKILL.md", typ: tar.TypeSymlink, link: "/etc/passwd"}}), ErrLink, "s/SKILL.md"},
		{"tar symlink", makeTar(t, []entry{{name: "s/SKILL.md", typ: tar.TypeSymlink, link: "/etc/passwd"}}, false), ErrLink, "s/SKILL.md"},
		{"tar hardlink", makeTar(t, []entry{{name: "a", body: "x"}, {name: "s/SKILL.md", typ: tar.TypeLink, link: "a"}}, true), ErrLink, "s/SKILL.md"},
		{"tar char device", makeTar(t, []entry{{name: "dev/null", typ: tar.TypeChar}}, false), ErrSpecial, "dev/null"},
		{"tar block device", makeTar(t, []entry{{name: "dev/sda", typ: tar.TypeBlock}}, false), ErrSpecial, "dev/sda"},
		{"tar fifo", makeTar(t, []entry{{name: "p", typ: tar.TypeFifo}}, false), ErrSpecial, "p"},
		{"zip fifo", makeZip(t, []entry{{name: "p", typ: tar.TypeFifo}}), ErrSpecial, "p"},
		{"tar duplicate", makeTar(t, []entry{{name: "s/SKILL.md", body: skillMD("s")}, {name: "./s/SKILL.md", body: "evil"}}, false), ErrDuplicate, "./s/SKILL.md"},
		{"zip duplicate", makeZip(t, []entry{{name: "s/SKILL.md", body: skillMD("s")}, {name: "s/SKILL.md", body: "evil"}}), ErrDuplicate, "s/SKILL.md"},
		{"file then folder", makeTar(t, []entry{{name: "s", body: "file"}, {name: "s/SKILL.md", body: "x"}}, false), ErrDuplicate, "s/SKILL.md"},
		{"zip declares 10 GB", lyingZip(t, "bomb.bin", []byte("small"), 10<<30), ErrLimit, "bomb.bin"},
		{"zip declares 100 bytes, holds 5 MB", lyingZip(t, "bomb.bin", big, 100), zip.ErrFormat, "bomb.bin"},
		{"zip bomb", makeZip(t, []entry{{name: "bomb.bin", body: string(big)}}), ErrLimit, "bomb.bin"},
		{"tgz bomb", makeTar(t, []entry{{name: "bomb.bin", body: string(big)}}, true), ErrLimit, "bomb.bin"},
		{"tar declares 10 GB", hugeTar(), ErrLimit, "huge.bin"},
		{"too many files", makeZip(t, func() []entry {
			var es []entry
			for i := range 9 {
				es = append(es, entry{name: fmt.Sprintf("f%d", i), body: "x"})
			}
			return es
		}()), ErrLimit, ""},
		{"too many tar entries", makeTar(t, func() []entry {
			var es []entry
			for i := range 9 {
				es = append(es, entry{name: fmt.Sprintf("d%d/", i), typ: tar.TypeDir})
			}
			return es
		}(), false), ErrLimit, ""},
		{"tgz of padding", func() []byte {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			for range 4 {
				tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": strings.Repeat("x", 500<<10)}})
			}
			tw.Close()
			zw.Close()
			return buf.Bytes()
		}(), ErrLimit, ""},
		{"not an archive", []byte("<html>not found</html>"), ErrFormat, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := srv.put("/"+strings.ReplaceAll(tc.name, " ", "-"), tc.data)
			cache := t.TempDir()
			o := *lim
			o.CacheDir = cache
			_, err := Open(context.Background(), u, &o)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), "archive "+u) {
				t.Errorf("error %q does not name the archive %s", err, u)
			}
			if tc.entry != "" {
				var ee *EntryError
				if !errors.As(err, &ee) || ee.Entry != tc.entry || ee.Archive != u {
					t.Errorf("error %v: want an *EntryError for %q", err, tc.entry)
				}
			}
			assertNothingUnpacked(t, cache)
		})
	}
}

// assertNothingUnpacked checks that a failed Open left no tree and no
// temporary file in the cache, and nothing anywhere outside it.
func assertNothingUnpacked(t *testing.T, cache string) {
	t.Helper()
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if b := d.Name(); strings.HasPrefix(b, "tree-") || strings.HasSuffix(b, ".tmp") || b == "x" {
			t.Errorf("left in the cache: %s", p)
		}
		return nil
	})
	if _, err := os.Lstat(filepath.Join(filepath.Dir(cache), "x")); err == nil {
		t.Errorf("an entry escaped the cache")
	}
}

// TestLimitsAtTheLimit: an archive exactly at each limit opens; one more
// file, entry or byte is refused.
func TestLimitsAtTheLimit(t *testing.T) {
	files := func(n, size int) []entry {
		var es []entry
		for i := range n {
			es = append(es, entry{name: fmt.Sprintf("f%d", i), body: strings.Repeat("x", size)})
		}
		return es
	}
	for _, tc := range []struct {
		name     string
		o        Options
		at, over []entry
	}{
		{"MaxFiles", Options{MaxFiles: 4}, files(4, 1), files(5, 1)},
		{"MaxFileBytes", Options{MaxFileBytes: 1000}, files(1, 1000), files(1, 1001)},
		{"MaxBytes", Options{MaxBytes: 3000}, files(3, 1000), append(files(3, 1000), entry{name: "one-more", body: "x"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, zipped := range []bool{true, false} {
				build := func(es []entry) []byte {
					if zipped {
						return makeZip(t, es)
					}
					return makeTar(t, es, true)
				}
				dir := t.TempDir()
				o := tc.o
				o.CacheDir = t.TempDir()
				at := filepath.Join(dir, "at.zip")
				os.WriteFile(at, build(tc.at), 0o644)
				if _, err := Open(context.Background(), at, &o); err != nil {
					t.Errorf("zip=%v at the limit: %v", zipped, err)
				}
				over := filepath.Join(dir, "over.zip")
				os.WriteFile(over, build(tc.over), 0o644)
				if _, err := Open(context.Background(), over, &o); !errors.Is(err, ErrLimit) {
					t.Errorf("zip=%v over the limit: %v, want ErrLimit", zipped, err)
				}
			}
		})
	}
	t.Run("MaxArchiveBytes", func(t *testing.T) {
		data := makeZip(t, twoSkills())
		srv := newServer(t)
		u := srv.put("/a.zip", data)
		if _, err := Open(context.Background(), u, &Options{CacheDir: t.TempDir(), MaxArchiveBytes: int64(len(data))}); err != nil {
			t.Errorf("at the limit: %v", err)
		}
		if _, err := Open(context.Background(), u, &Options{CacheDir: t.TempDir(), MaxArchiveBytes: int64(len(data)) - 1}); !errors.Is(err, ErrLimit) {
			t.Errorf("over the limit: %v, want ErrLimit", err)
		}
	})
}

// TestEndlessTar: a tar whose entry declares 10 GB and whose stream never
// ends is cut off at MaxArchiveBytes without reading on.
func TestEndlessTar(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := tar.NewWriter(w)
		tw.WriteHeader(&tar.Header{Name: "endless.bin", Typeflag: tar.TypeReg, Size: 10 << 30, Mode: 0o644})
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return // the client hung up
			}
		}
	}))
	defer srv.Close()
	start := time.Now()
	_, err := Open(context.Background(), srv.URL+"/endless.tar", &Options{CacheDir: t.TempDir(), MaxArchiveBytes: 4 << 20})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("err = %v, want ErrLimit", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestSlowDripTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		for {
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := w.Write([]byte("P")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	defer close(stop)
	start := time.Now()
	_, err := Open(context.Background(), srv.URL+"/slow.zip", &Options{CacheDir: t.TempDir(), Timeout: 300 * time.Millisecond})
	d := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Fatalf("err = %v, want the timeout", err)
	}
	if d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %v, want about 300ms", d)
	}
}

func TestConnectTimeout(t *testing.T) {
	// 192.0.2.0/24 (TEST-NET-1) is never routed; where the network
	// answers at once instead, the error comes sooner, which is fine.
	start := time.Now()
	_, err := Open(context.Background(), "http://192.0.2.1:81/a.zip", &Options{CacheDir: t.TempDir(), ConnectTimeout: 200 * time.Millisecond})
	if err == nil {
		t.Fatal("no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v with a 200ms connect timeout", d)
	}
}

func TestPin(t *testing.T) {
	srv := newServer(t)
	data := makeZip(t, twoSkills())
	u := srv.put("/a.zip", data)
	cache := t.TempDir()
	_, err := Open(context.Background(), u+"#sha256="+sha([]byte("other")), &Options{CacheDir: cache})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), sha(data)) {
		t.Fatalf("wrong pin: %v", err)
	}
	assertNothingUnpacked(t, cache)
	for _, bad := range []string{"#sha256=abc", "#md5=" + sha(data)[:32], "#sha256=" + strings.Repeat("g", 64)} {
		if _, err := Open(context.Background(), u+bad, &Options{CacheDir: cache}); err == nil || !strings.Contains(err.Error(), "not a pin") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	src, err := Open(context.Background(), u+"#sha256="+sha(data), &Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if len(skillNames(t, src)) != 2 {
		t.Error("pinned archive: skills missing")
	}
	// A pinned copy is never fetched again, even past its TTL and with
	// the server gone.
	hits, _ := srv.counts("/a.zip")
	srv.Close()
	if _, err := Open(context.Background(), u+"#sha256="+sha(data), &Options{CacheDir: cache, TTL: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	if h, _ := srv.counts("/a.zip"); h != hits {
		t.Errorf("pinned copy fetched again: %d requests, then %d", hits, h)
	}
}

func TestRevalidation(t *testing.T) {
	srv := newServer(t)
	u := srv.put("/a.zip", makeZip(t, twoSkills()))
	cache := t.TempDir()
	first, err := Open(context.Background(), u, &Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	// Within the TTL: no request.
	if _, err := Open(context.Background(), u, &Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	if hits, full := srv.counts("/a.zip"); hits != 1 || full != 1 {
		t.Errorf("within the TTL: %d requests (%d full), want 1 (1)", hits, full)
	}
	// Past it: a conditional request answered 304, the copy reused.
	again, err := Open(context.Background(), u, &Options{CacheDir: cache, TTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if hits, full := srv.counts("/a.zip"); hits != 2 || full != 1 {
		t.Errorf("past the TTL: %d requests (%d full), want 2 (1)", hits, full)
	}
	if again.Path != first.Path {
		t.Errorf("304 unpacked again: %s, then %s", first.Path, again.Path)
	}
	// The content changed: fetched and unpacked anew.
	srv.put("/a.zip", makeZip(t, twoSkills()[:3]))
	changed, err := Open(context.Background(), u, &Options{CacheDir: cache, TTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if hits, full := srv.counts("/a.zip"); hits != 3 || full != 2 {
		t.Errorf("changed: %d requests (%d full), want 3 (2)", hits, full)
	}
	if got := strings.Join(skillNames(t, changed), ","); got != "alpha" {
		t.Errorf("changed: skills %q, want alpha", got)
	}
	// The previous copy stays for whoever still reads it.
	if _, err := os.Stat(first.Path); err != nil {
		t.Errorf("previous copy removed: %v", err)
	}
}

func TestOfflineFallback(t *testing.T) {
	srv := newServer(t)
	u := srv.put("/a.zip", makeZip(t, twoSkills()))
	cache := t.TempDir()
	if _, err := Open(context.Background(), u, &Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	var warnings []string
	src, err := Open(context.Background(), u, &Options{CacheDir: cache, TTL: time.Nanosecond, Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "archive "+u) || !strings.Contains(warnings[0], "using the copy cached") {
		t.Errorf("warnings %q", warnings)
	}
	if got := strings.Join(skillNames(t, src), ","); got != "alpha,beta" {
		t.Errorf("skills %q", got)
	}
	// Without a copy there is nothing to fall back on.
	if _, err := Open(context.Background(), u, &Options{CacheDir: t.TempDir()}); err == nil {
		t.Error("no error without a cached copy")
	}
}

func TestServerErrors(t *testing.T) {
	srv := newServer(t)
	u := srv.put("/a.zip", makeZip(t, twoSkills()))
	cache := t.TempDir()
	if _, err := Open(context.Background(), u, &Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	delete(srv.files, "/a.zip")
	srv.mu.Unlock()
	// A 404 is an answer, not an outage: no fallback.
	_, err := Open(context.Background(), u, &Options{CacheDir: cache, TTL: time.Nanosecond})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
}

func TestCredentialsNeverShown(t *testing.T) {
	srv := newServer(t)
	var gotUser, gotPass string
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		http.Error(w, "nope", http.StatusForbidden)
	})
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, u := range []string{
		"http://tok-user:hunter2@" + host + "/a.zip?token=s3cr3t",
		"http://tok-user:hunter2@127.0.0.1:1/a.zip?token=s3cr3t", // refused connection
		"http://tok-user:hunter2@" + host + "/a.zip?token=s3cr3t#sha256=nope",
	} {
		var warned []string
		src, err := Open(context.Background(), u, &Options{CacheDir: t.TempDir(), Warn: func(m string) { warned = append(warned, m) }})
		if err == nil {
			t.Fatalf("%s: no error", u)
		}
		for _, secret := range []string{"tok-user", "hunter2", "s3cr3t"} {
			if strings.Contains(err.Error(), secret) || strings.Contains(src.Label, secret) || strings.Contains(strings.Join(warned, "\n"), secret) {
				t.Errorf("%q shown: %v", secret, err)
			}
		}
	}
	if gotUser != "tok-user" || gotPass != "hunter2" {
		t.Errorf("the server got %q:%q, want the URL's credentials", gotUser, gotPass)
	}
}

func TestConcurrentOpen(t *testing.T) {
	srv := newServer(t)
	u := srv.put("/a.tgz", makeTar(t, twoSkills(), true))
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = Open(context.Background(), u, &Options{CacheDir: cache})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestOptionsInvalid(t *testing.T) {
	for _, o := range []Options{{TTL: -1}, {Timeout: -1}, {ConnectTimeout: -1}, {MaxBytes: -1}, {MaxFiles: -1}, {MaxFileBytes: -1}, {MaxArchiveBytes: -1}} {
		if _, err := Open(context.Background(), "x.zip", &o); err == nil || !strings.Contains(err.Error(), "Options.") {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestCacheDirFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := CacheDirFromEnv(env(map[string]string{"SKILLKIT_CACHE_DIR": "/a", "SKILLS_CACHE_DIR": "/b"})); got != "/a" {
		t.Errorf("got %q", got)
	}
	if got := CacheDirFromEnv(env(map[string]string{"SKILLS_CACHE_DIR": "/b"})); got != "/b" {
		t.Errorf("alias: got %q", got)
	}
	if got := CacheDirFromEnv(env(nil)); got != "" {
		t.Errorf("unset: got %q", got)
	}
}

// TestCacheOthersCouldWrite refuses a cache folder that another user owns
// or may write, or that is a link: a pinned archive found there is used
// without a download, so its contents must be this user's.
func TestCacheOthersCouldWrite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "skills.tar.gz")
	if err := os.WriteFile(file, makeTar(t, twoSkills(), true), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(cache string) error {
		_, err := Open(context.Background(), file, &Options{CacheDir: cache})
		return err
	}
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := open(shared); err == nil || !strings.Contains(err.Error(), "may be written by others") {
		t.Errorf("a world-writable cache: %v", err)
	}
	link := filepath.Join(dir, "cache-link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if err := open(link); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a cache that is a link: %v", err)
	}
	if os.Geteuid() == 0 {
		other := t.TempDir()
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if err := open(other); err == nil || !strings.Contains(err.Error(), "belongs to uid 12345") {
			t.Errorf("another user's cache: %v", err)
		}
	}
	if err := open(t.TempDir()); err != nil {
		t.Errorf("a cache of one's own: %v", err)
	}
}

// An archive of one skill with its SKILL.md at the top: the skill is
// found in a folder of its own name, so nothing warns that the folder
// (the cache's tree) does not match the skill's name.
func TestOpenSkillAtTop(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "solo-1.2.zip")
	data := makeZip(t, []entry{{name: "SKILL.md", body: skillMD("solo")}, {name: "scripts/run.sh", body: "echo hi\n"}})
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Open(context.Background(), file, &Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := source.Discover(context.Background(), src, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skills) != 1 || res.Skills[0].Front.Name != "solo" {
		t.Fatalf("skills %+v", res.Skills)
	}
	if len(res.Diagnostics) != 0 {
		t.Errorf("diagnostics %+v", res.Diagnostics)
	}
	if _, err := os.Stat(filepath.Join(src.Path, "solo", "scripts", "run.sh")); err != nil {
		t.Errorf("the skill's files: %v", err)
	}
}

// A top SKILL.md whose name cannot name a folder: the archive's own name
// does, when it is a valid skill name.
func TestOpenSkillAtTopNamedByArchive(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "report.tar.gz")
	md := "---\nname: Report Writer\ndescription: Writes reports.\n---\nWrite.\n"
	if err := os.WriteFile(file, makeTar(t, []entry{{name: "SKILL.md", body: md}}, true), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Open(context.Background(), file, &Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src.Path, "report", "SKILL.md")); err != nil {
		t.Errorf("want the skill in a folder named for the archive: %v", err)
	}
}
