package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ringo-ccl/ringo/bench"
)

// compareMain prints, size by size, two nccl-tests tables side by side:
// ringo compare [-a NAME] [-b NAME] A.txt B.txt.
func compareMain(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	aName := fs.String("a", "A", "name of the first table's library")
	bName := fs.String("b", "B", "name of the second table's library")
	times := fs.Bool("times", false, "compare times out of place and in place, and algorithm bandwidths (for one-rank tables, whose bus bandwidth is 0)")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("compare wants two table files, got %d", fs.NArg())
	}
	var tables [2][]bench.Row
	for i := range tables {
		f, err := os.Open(fs.Arg(i))
		if err != nil {
			return err
		}
		tables[i], err = bench.ParseTable(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(i), err)
		}
	}
	write := bench.WriteComparison
	if *times {
		write = bench.WriteTimeComparison
	}
	if write(os.Stdout, *aName, *bName, tables[0], tables[1]) == 0 {
		return fmt.Errorf("the tables share no size")
	}
	return nil
}
