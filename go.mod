module github.com/ringo-ccl/ringo

go 1.26
