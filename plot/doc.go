// Package plot draws line charts of bandwidth against message size as SVG:
// a log2 size axis labelled in B, KiB, MiB and GiB, a linear value axis, a
// line with markers per series, a grid and a legend — enough for a reader
// to see where one ring variant or library overtakes another.
//
// It is pure Go with no dependencies, and its output is deterministic: the
// same chart always yields the same bytes, so rendered charts can be
// committed and diffed.
package plot
