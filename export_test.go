package ringo

// Internals the external tests check (the export_test.go idiom).
var P2PChannels = p2pChannels
