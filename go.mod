module github.com/ringo-ccl/ringo

go 1.26.0

require (
	github.com/Mellanox/rdmamap v1.1.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
	gorgonia.org/cu v0.9.6
)

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/vishvananda/netlink v1.1.0 // indirect
	github.com/vishvananda/netns v0.0.0-20191106174202-0a2b9b5464df // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
