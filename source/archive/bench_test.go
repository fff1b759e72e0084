package archive

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillkit/skillkit/source"
)

// benchArchive is a zip of 17 skills, each with a SKILL.md, two
// documents and a 290 KiB incompressible data file: about 5 MB.
func benchArchive(b *testing.B) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var es []entry
	for i := range 17 {
		name := fmt.Sprintf("skill-%02d", i)
		data := make([]byte, 290<<10)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		es = append(es,
			entry{name: "repo-main/skills/" + name + "/SKILL.md", body: skillMD(name)},
			entry{name: "repo-main/skills/" + name + "/REFERENCE.md", body: "# Reference\n\nSee the forms.\n"},
			entry{name: "repo-main/skills/" + name + "/scripts/run.py", body: "print('hi')\n", mode: 0o755},
			entry{name: "repo-main/skills/" + name + "/assets/data.bin", body: string(data)},
		)
	}
	return makeZip(b, es)
}

// BenchmarkOpenDiscover: a 17-skill, ~5 MB archive downloaded from
// 127.0.0.1 (or read from a file), checked, unpacked into an empty cache
// and discovered. Target: 300 ms.
func BenchmarkOpenDiscover(b *testing.B) {
	data := benchArchive(b)
	b.Logf("archive: %d bytes", len(data))
	file := filepath.Join(b.TempDir(), "skills.zip")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	srv := newServer(b)
	u := srv.put("/skills.zip", data)
	for _, where := range []struct{ name, loc string }{{"http", u}, {"file", file}} {
		b.Run(where.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				b.StopTimer()
				cache := b.TempDir()
				b.StartTimer()
				src, err := Open(context.Background(), where.loc, &Options{CacheDir: cache})
				if err != nil {
					b.Fatal(err)
				}
				res, err := source.Discover(context.Background(), src, source.Options{})
				if err != nil || len(res.Skills) != 17 {
					b.Fatalf("%v: %d skills", err, len(res.Skills))
				}
			}
		})
	}
}
