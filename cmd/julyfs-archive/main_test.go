package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/plugins"
	_ "github.com/julyfs/julyfs/plugins/pluginkind" // the in-process CLI runs plugins
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

var pluginBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "julyfs-archive-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin = filepath.Join(dir, "julyfs-archive")
	cmd := exec.Command("go", "build", "-o", pluginBin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building julyfs-archive:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestConformanceZip(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		fsys, err := seedZip(files)
		require.NoError(t, err)
		return fsys
	}, vfstest.Options{ReadOnly: true})
}

// TestConformanceTar checks a tar without directory entries, whose
// directories the plugin infers.
func TestConformanceTar(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		p := filepath.Join(t.TempDir(), "a.tar.gz")
		require.NoError(t, os.WriteFile(p, gz(t, tarOf(t, files)), 0o644))
		fsys, err := openArchive(p, "")
		require.NoError(t, err)
		return fsys
	}, vfstest.Options{ReadOnly: true})
}

func TestConformanceThroughPlugin(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		fsys, err := plugins.OpenConfig(ctx, plugins.Config{Path: pluginBin, Seeded: true, Seed: files, Logger: hclog.NewNullLogger()})
		require.NoError(t, err)
		t.Cleanup(func() { fsys.Close() })
		return fsys
	}, vfstest.Options{ReadOnly: true})
}

var fixture = map[string][]byte{
	"README.md":      []byte("# dist\nTODO: ship\n"),
	"bin/tool":       []byte("\x7fELF\x00TODO"),
	"src/lib/a.go":   []byte("package lib\n// TODO a\n"),
	"src/lib-x/b.go": []byte("package x\n"),
}

func tarOf(t *testing.T, files map[string][]byte) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		require.NoError(t, w.WriteHeader(&tar.Header{Name: "./" + strings.TrimPrefix(name, "/"), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func gz(t *testing.T, data []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// zipOf writes only file entries, as many zip writers do.
func zipOf(t *testing.T, files map[string][]byte) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f, err := w.Create(name)
		require.NoError(t, err)
		_, err = f.Write(files[name])
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func run(t *testing.T, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code := julyfscli.Run(ctx, append([]string{"julyfs"}, args...), strings.NewReader(""), &stdout, &stderr, julyfscli.Heavy{})
	return code, stdout.String(), stderr.String()
}

func TestFormatsThroughCLI(t *testing.T) {
	dir := t.TempDir()
	archives := map[string][]byte{
		"dist.zip":    zipOf(t, fixture),
		"dist.tar":    tarOf(t, fixture),
		"dist.tar.gz": gz(t, tarOf(t, fixture)),
		"noext":       gz(t, tarOf(t, fixture)),
	}
	for name, data := range archives {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	for name := range archives {
		t.Run(name, func(t *testing.T) {
			spec := "/a=plugin:" + pluginBin + "?file=" + filepath.Join(dir, name)
			code, out, errOut := run(t, "cat", "--mount", spec, "--mount", "/n=temp:", "/a/README.md")
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, "# dist\nTODO: ship\n", out)

			code, out, errOut = run(t, "glob", "--mount", spec, "**", "/a")
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, "/a/README.md\n/a/bin\n/a/bin/tool\n/a/src\n/a/src/lib\n/a/src/lib-x\n/a/src/lib-x/b.go\n/a/src/lib/a.go\n", out)

			code, out, errOut = run(t, "grep", "--mount", spec, "TODO", "/a")
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, "/a/README.md:2:TODO: ship\n/a/src/lib/a.go:2:// TODO a\n", out, "the binary file is skipped")

			code, _, errOut = run(t, "rm", "--mount", spec, "/a/README.md")
			assert.Equal(t, 1, code)
			assert.Equal(t, "read-only mount: /a/README.md\n", errOut)
		})
	}
}

func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	zipData := zipOf(t, fixture)
	tgz := gz(t, tarOf(t, fixture))
	for name, data := range map[string][]byte{
		"short.zip":     zipData[:len(zipData)/2],
		"garbage.zip":   []byte("PK\x03\x04 not really"),
		"short.tar.gz":  tgz[:len(tgz)/2],
		"notgz.tar.gz":  []byte("plain text"),
		"garbage.tar":   bytes.Repeat([]byte("x"), 1024),
		"truncated.tar": tarOf(t, fixture)[:512+5],
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	for _, name := range []string{"short.zip", "garbage.zip", "short.tar.gz", "notgz.tar.gz", "garbage.tar", "truncated.tar", "missing.zip"} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			// The mount is bound (with a warning on standard error) and
			// its calls fail with one line naming the plugin.
			code, _, errOut := run(t, "ls", "--mount", "/n=temp:", "--mount", "/a=plugin:"+pluginBin+"?file="+p, "/a")
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, "/a: plugin julyfs-archive: ")
			if name == "missing.zip" {
				assert.Contains(t, errOut, "file="+p+": no such file or directory")
			} else {
				assert.Contains(t, errOut, p+" is not a valid ")
			}
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
}

func TestConformanceCommand(t *testing.T) {
	code, out, errOut := run(t, "conformance", "--mount", "/=plugin:"+pluginBin, "--read-only")
	assert.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^[1-9][0-9]* passed, 0 failed$`, out)
}
