package main

import (
	"fmt"
	"os"

	"github.com/ringo-ccl/ringo/bench"
)

// The files of bandwidth-versus-size series that ringo bench -csv and ringo
// sim -csv write, and ringo plot and ringo sim -compare read.

// writePointsFile writes points as CSV to a new file at path.
func writePointsFile(path string, pts []bench.Point) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.WritePoints(file, pts); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// readPointsFile reads a CSV file or an nccl-tests table (whose points are
// labelled label); a file with no rows is an error.
func readPointsFile(path, label string) ([]bench.Point, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	pts, err := bench.ReadSeries(file, label)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: no rows of an nccl-tests table or ringo CSV", path)
	}
	return pts, nil
}
