//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestNewVolume(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if unprivileged() {
		_, err := NewVolume(ctx, mk("v"), filepath.Join(dir, "v.img"), nil)
		var fe *FeatureError
		if !errors.As(err, &fe) || fe.Feature != FeatureVolume {
			t.Fatalf("err = %v, want a FeatureError for %q", err, FeatureVolume)
		}
		return
	}
	t.Run("invalid", func(t *testing.T) {
		full := mk("full")
		if err := os.WriteFile(filepath.Join(full, "f"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name       string
			dir, image string
			opts       *VolumeOptions
			want       error
		}{
			{"not empty", full, filepath.Join(dir, "full.img"), nil, ErrNotEmpty},
			{"image inside", mk("in"), filepath.Join(dir, "in", "x.img"), nil, ErrInvalidSpec},
			{"relative", "rel", "rel.img", nil, ErrInvalidSpec},
			{"negative", mk("neg"), filepath.Join(dir, "neg.img"), &VolumeOptions{Bytes: -1}, ErrInvalidSpec},
			{"too small", mk("small"), filepath.Join(dir, "small.img"), &VolumeOptions{Bytes: 1 << 20}, ErrInvalidSpec},
		} {
			if _, err := NewVolume(ctx, tc.dir, tc.image, tc.opts); !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
			}
		}
	})
	t.Run("at the limits", func(t *testing.T) {
		d, img := mk("v"), filepath.Join(dir, "v.img")
		v, err := NewVolume(ctx, d, img, &VolumeOptions{Bytes: 32 << 20, Inodes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		defer v.Remove()
		var st unix.Statfs_t
		if err := unix.Statfs(d, &st); err != nil {
			t.Fatal(err)
		}
		if size := int64(st.Blocks) * st.Frsize; size > 32<<20 || st.Files > 1000 || st.Files < 900 {
			t.Errorf("volume of %d bytes and %d inodes; want at most 32 MiB and 1000 (and close to it)", size, st.Files)
		}
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("a new volume is not empty: %v", entries)
		}
		// Asking again returns the mounted volume.
		if _, err := NewVolume(ctx, d, img, nil); err != nil {
			t.Errorf("NewVolume on its own mount: %v", err)
		}
		// Another image at the same directory is refused.
		if _, err := NewVolume(ctx, d, filepath.Join(dir, "other.img"), nil); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("another image on a mounted volume: %v", err)
		}
		if err := os.WriteFile(filepath.Join(d, "keep"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := v.Unmount(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(d, "keep")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("still mounted after Unmount: %v", err)
		}
		if _, err := NewVolume(ctx, d, img, nil); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(d, "keep")); err != nil || string(b) != "x" {
			t.Fatalf("remounted volume lost its file: %q %v", b, err)
		}
		if err := v.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(img); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Remove left the image: %v", err)
		}
	})
}
