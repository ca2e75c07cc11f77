package bootstrap

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// expandHostlist expands a Slurm hostlist, as in SLURM_JOB_NODELIST, into
// its host names in order: comma-separated names, each with any number of
// bracketed lists of numbers and ranges, e.g. "node[01-03,07],gpu5" is
// node01 node02 node03 node07 gpu5 and "r[1-2]n[8-9]" is r1n8 r1n9 r2n8 r2n9.
// A range keeps the width of its first number ("[08-10]": 08 09 10). It
// refuses a malformed list and one of more than max names.
func expandHostlist(s string, max int) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				depth++
				if depth > 1 {
					return nil, fmt.Errorf("nested '[' at byte %d", i)
				}
				continue
			case ']':
				depth--
				if depth < 0 {
					return nil, fmt.Errorf("']' without '[' at byte %d", i)
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth > 0 {
			return nil, fmt.Errorf("'[' not closed")
		}
		name := s[start:i]
		if name == "" {
			return nil, fmt.Errorf("empty host name at byte %d", start)
		}
		hosts, err := expandName(name, max-len(out))
		if errors.Is(err, errTooManyHosts) {
			return nil, fmt.Errorf("more than %d host names", max)
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %w", name, err)
		}
		out = append(out, hosts...)
		start = i + 1
	}
	return out, nil
}

var errTooManyHosts = errors.New("too many host names")

// expandName expands one name whose brackets are balanced and not nested,
// into at most max names.
func expandName(name string, max int) ([]string, error) {
	if max < 1 {
		return nil, errTooManyHosts
	}
	open := strings.IndexByte(name, '[')
	if open < 0 {
		return []string{name}, nil
	}
	end := open + strings.IndexByte(name[open:], ']')
	nums, err := expandRanges(name[open+1:end], max)
	if err != nil {
		return nil, err
	}
	rest, err := expandName(name[end+1:], max/len(nums))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(nums)*len(rest))
	for _, n := range nums {
		for _, r := range rest {
			out = append(out, name[:open]+n+r)
		}
	}
	return out, nil
}

// expandRanges expands "1-3,07" to 1 2 3 07: at most max (≥ 1) numbers.
func expandRanges(list string, max int) ([]string, error) {
	var out []string
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, errA := parseDigits(lo)
		b, errB := parseDigits(hi)
		switch {
		case errA != nil || errB != nil:
			return nil, fmt.Errorf("[%s]: %q is not a number or a range of numbers", list, r)
		case a > b:
			return nil, fmt.Errorf("[%s]: range %q runs backwards", list, r)
		case b-a >= uint64(max-len(out)):
			return nil, errTooManyHosts
		}
		for n := a; n <= b; n++ {
			out = append(out, fmt.Sprintf("%0*d", len(lo), n))
		}
	}
	return out, nil
}

// parseDigits parses a non-empty string of at most 9 decimal digits.
func parseDigits(s string) (uint64, error) {
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return strconv.ParseUint(s, 10, 64)
}
