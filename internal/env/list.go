package env

import (
	"fmt"
	"strings"
)

// ParseList parses NCCL's selection syntax for NCCL_PROTO and NCCL_ALGO
// over the given names: a comma-separated list of names (case-insensitive)
// selects them; a leading '^' selects all names except those listed. It
// returns the selection as a set over names' indices. NCCL's per-function
// prefixes ("allreduce:ll;...") are accepted for the entry without a prefix
// or with the prefix fn; entries for other functions are ignored.
func ParseList(s string, names []string, fn string) ([]bool, error) {
	entry := ""
	found := false
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if i := strings.IndexByte(part, ':'); i >= 0 {
			if strings.EqualFold(strings.TrimSpace(part[:i]), fn) {
				entry, found = part[i+1:], true
			}
			continue
		}
		if !found {
			entry, found = part, true
		}
	}
	if !found {
		return nil, fmt.Errorf("nothing selected in %q", s)
	}
	entry = strings.TrimSpace(entry)
	exclude := strings.HasPrefix(entry, "^")
	entry = strings.TrimPrefix(entry, "^")
	set := make([]bool, len(names))
	for _, tok := range strings.Split(entry, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		i := indexFold(names, tok)
		if i < 0 {
			return nil, fmt.Errorf("unknown name %q (valid: %s)", tok, strings.Join(names, ", "))
		}
		set[i] = true
	}
	if exclude {
		for i := range set {
			set[i] = !set[i]
		}
	}
	return set, nil
}

func indexFold(names []string, s string) int {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return i
		}
	}
	return -1
}
