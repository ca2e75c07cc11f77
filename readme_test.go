package ringo_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEListsEveryVariable: every environment variable the code reads
// — each env.Var, and each RINGO_/NCCL_ name the code spells out whole —
// has its row in README's "Environment variables", which says what a bad
// value does.
func TestREADMEListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	start := strings.Index(readme, "\n## Environment variables\n")
	require.GreaterOrEqual(t, start, 0, "README has no section \"Environment variables\"")
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	varDecl := regexp.MustCompile(`Var\{Name: "([A-Z0-9_]+)"(, NCCL: true)?\}`)
	literal := regexp.MustCompile(`"((?:NCCL|RINGO)_[A-Z0-9_]+)"`)
	found := map[string]string{} // name → a file that reads it
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "third_party" || d.Name() == "nvtxtest"): // nvtxtest: a tool of the tests
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range varDecl.FindAllStringSubmatch(string(src), -1) {
			name := "RINGO_" + m[1]
			if m[2] != "" {
				name = "NCCL_" + m[1]
			}
			found[name] = path
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = path
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(found), 30, "the scan found too few variables: %v", found)
	for name, path := range found {
		assert.Contains(t, section, "`"+name+"`", "%s reads %s, which README's \"Environment variables\" does not list", path, name)
	}
}
