package main

import (
	"encoding/binary"
	"strings"
	"testing"
	"unsafe"
)

// cConfig builds a config as a C caller of header version ver would:
// NCCL_CONFIG_INITIALIZER of size bytes, then set applied.
func cConfig(size int, ver uint32, set func(b []byte)) []byte {
	full := initializerBytes()
	b := make([]byte, max(size, configSize)+16) // room for fields of newer headers
	copy(b, full[:])
	ne := binary.NativeEndian
	ne.PutUint64(b[cfgOffSize:], uint64(size))
	ne.PutUint32(b[cfgOffVersion:], ver)
	for off := configSize; off+4 <= len(b); off += 4 {
		ne.PutUint32(b[off:], 1<<31) // a newer header's fields: INT_MIN
	}
	if set != nil {
		set(b)
	}
	return b
}

func putI32(off int, v int32) func([]byte) {
	return func(b []byte) { binary.NativeEndian.PutUint32(b[off:], uint32(v)) }
}

func parseAt(t *testing.T, b []byte) (commConfig, error) {
	t.Helper()
	p := unsafe.Pointer(&b[0])
	return parseConfig("ncclCommInitRankConfig", readConfig(p), nil)
}

func TestConfigDefaults(t *testing.T) {
	c, err := parseAt(t, cConfig(configSize, versionCode, nil))
	if err != nil {
		t.Fatal(err)
	}
	if c != defaultConfig() {
		t.Fatalf("NCCL_CONFIG_INITIALIZER parsed as %+v", c)
	}
	// Every communicator of the C ABI defers the stop of kernels a lost
	// peer leaves waiting until the error is read (PyTorch's order).
	if g := c.ringo().StopGrace; g <= 0 {
		t.Fatalf("the C ABI's communicators stop their kernels at once on a loss (StopGrace %v)", g)
	}
}

func TestConfigFields(t *testing.T) {
	b := cConfig(configSize, versionCode, func(b []byte) {
		putI32(cfgOffBlocking, 0)(b)
		putI32(cfgOffMinCTAs, 2)(b)
		putI32(cfgOffMaxCTAs, 16)(b)
		putI32(cfgOffCTAPolicy, 1)(b)
		putI32(cfgOffNVLSCTAs, 4)(b)
		putI32(cfgOffSplitShare, 1)(b)
		putI32(cfgOffTrafficClass, 3)(b)
	})
	c, err := parseAt(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Blocking != 0 || c.MinCTAs != 2 || c.MaxCTAs != 16 || c.CTAPolicy != 1 || c.NVLSCTAs != 4 || c.SplitShare != 1 || c.TrafficClass != 3 {
		t.Fatalf("parsed %+v", c)
	}
}

// A config of a newer header (PyTorch's 2.28: 80 bytes) is read up to our
// size; one of an older header (2.18: 48 bytes) keeps our defaults beyond
// its size and for fields newer than its version.
func TestConfigSizes(t *testing.T) {
	newer := cConfig(80, ncclVersion(2, 28, 9), putI32(cfgOffCTAPolicy, 2))
	binary.NativeEndian.PutUint32(newer[72:], 1) // nChannelsPerNetPeer, ignored
	c, err := parseAt(t, newer)
	if err != nil || c.CTAPolicy != 2 {
		t.Fatalf("2.28 config: %+v, %v", c, err)
	}

	older := cConfig(48, ncclVersion(2, 18, 0), func(b []byte) {
		putI32(cfgOffBlocking, 1)(b)
		putI32(cfgOffSplitShare, 1)(b)
		// Garbage beyond the caller's 48 bytes must not be read.
		putI32(cfgOffCTAPolicy, 99)(b)
		putI32(cfgOffNVLSCTAs, -5)(b)
	})
	c, err = parseAt(t, older)
	if err != nil {
		t.Fatalf("2.18 config: %v", err)
	}
	if c.Blocking != 1 || c.SplitShare != 1 || c.CTAPolicy != undefInt || c.NVLSCTAs != undefInt {
		t.Fatalf("2.18 config parsed as %+v", c)
	}
	if n := len(readConfig(unsafe.Pointer(&older[0]))); n != 48 {
		t.Fatalf("read %d bytes of a 48-byte config", n)
	}
	if n := len(readConfig(unsafe.Pointer(&newer[0]))); n != configSize {
		t.Fatalf("read %d bytes of an 80-byte config", n)
	}
}

// Fields newer than the config's version are reset to their defaults,
// whatever the bytes hold.
func TestConfigVersionGates(t *testing.T) {
	cases := []struct {
		ver   uint32
		off   int
		field func(commConfig) int32
	}{
		{ncclVersion(2, 13, 0), cfgOffBlocking, func(c commConfig) int32 { return c.Blocking }},
		{ncclVersion(2, 16, 0), cfgOffMaxCTAs, func(c commConfig) int32 { return c.MaxCTAs }},
		{ncclVersion(2, 17, 1), cfgOffSplitShare, func(c commConfig) int32 { return c.SplitShare }},
		{ncclVersion(2, 24, 0), cfgOffTrafficClass, func(c commConfig) int32 { return c.TrafficClass }},
		{ncclVersion(2, 26, 5), cfgOffCTAPolicy, func(c commConfig) int32 { return c.CTAPolicy }},
		{ncclVersion(2, 26, 5), cfgOffCollnetEnable, func(c commConfig) int32 { return c.CollnetEnable }},
	}
	for _, tc := range cases {
		b := cConfig(configSize, tc.ver, putI32(tc.off, 1))
		c, err := parseAt(t, b)
		if err != nil {
			t.Fatalf("version %d: %v", tc.ver, err)
		}
		if got := tc.field(c); got != undefInt {
			t.Errorf("version %d: field at %d = %d, want it reset", tc.ver, tc.off, got)
		}
		// One version later the field is read.
		b = cConfig(configSize, ncclVersion(2, 27, 0), putI32(tc.off, 1))
		if c, err = parseAt(t, b); err != nil || tc.field(c) != 1 {
			t.Errorf("version 2.27: field at %d = %d, %v, want 1", tc.off, tc.field(c), err)
		}
	}
}

func TestConfigInvalid(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"bad magic", cConfig(configSize, versionCode, func(b []byte) { binary.NativeEndian.PutUint32(b[cfgOffMagic:], 0xbeefcafe) }), "magic"},
		{"size too small for the magic", cConfig(8, versionCode, nil), "magic"},
		{"size 0", cConfig(0, versionCode, nil), "magic"},
		{"blocking 2", cConfig(configSize, versionCode, putI32(cfgOffBlocking, 2)), "blocking"},
		{"cgaClusterSize -1", cConfig(configSize, versionCode, putI32(cfgOffCGAClusterSz, -1)), "cgaClusterSize"},
		{"minCTAs 0", cConfig(configSize, versionCode, putI32(cfgOffMinCTAs, 0)), "minCTAs"},
		{"maxCTAs -3", cConfig(configSize, versionCode, putI32(cfgOffMaxCTAs, -3)), "maxCTAs"},
		{"min > max", cConfig(configSize, versionCode, func(b []byte) { putI32(cfgOffMinCTAs, 8)(b); putI32(cfgOffMaxCTAs, 4)(b) }), "minCTAs 8 > maxCTAs 4"},
		{"splitShare 3", cConfig(configSize, versionCode, putI32(cfgOffSplitShare, 3)), "splitShare"},
		{"collnetEnable 2", cConfig(configSize, versionCode, putI32(cfgOffCollnetEnable, 2)), "collnetEnable"},
		{"CTAPolicy 9", cConfig(configSize, versionCode, putI32(cfgOffCTAPolicy, 9)), "CTAPolicy"},
		{"shrinkShare 5", cConfig(configSize, versionCode, putI32(cfgOffShrinkShare, 5)), "shrinkShare"},
		{"nvlsCTAs 0", cConfig(configSize, versionCode, putI32(cfgOffNVLSCTAs, 0)), "nvlsCTAs"},
	}
	for _, c := range cases {
		_, err := parseAt(t, c.b)
		wantResult(t, c.name, err, ncclInvalidArgument)
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ncclCommInitRankConfig: config: ") {
			t.Errorf("%s: error %q does not name %q", c.name, err, c.want)
		}
	}
}

// The config is read, never written.
func TestConfigNotWritten(t *testing.T) {
	b := cConfig(configSize, versionCode, putI32(cfgOffBlocking, 0))
	before := append([]byte(nil), b...)
	if _, err := parseAt(t, b); err != nil {
		t.Fatal(err)
	}
	if string(b) != string(before) {
		t.Fatal("parsing changed the caller's config")
	}
}

func TestConfigStrings(t *testing.T) {
	name := []byte("my-comm\x00")
	net := []byte("IB\x00")
	b := cConfig(configSize, versionCode, nil)
	p := unsafe.Pointer(&b[0])
	*(*unsafe.Pointer)(unsafe.Add(p, cfgOffCommName)) = unsafe.Pointer(&name[0])
	*(*unsafe.Pointer)(unsafe.Add(p, cfgOffNetName)) = unsafe.Pointer(&net[0])
	c, err := parseConfig("f", readConfig(p), configString(p))
	if err != nil || c.CommName != "my-comm" || c.NetName != "IB" {
		t.Fatalf("strings parsed as %q %q, %v", c.CommName, c.NetName, err)
	}
	// Pointers of a 2.16 config are not followed.
	binary.NativeEndian.PutUint32(b[cfgOffVersion:], ncclVersion(2, 16, 0))
	if c, err = parseConfig("f", readConfig(p), configString(p)); err != nil || c.NetName != "" || c.CommName != "" {
		t.Fatalf("2.16 config: strings %q %q, %v", c.CommName, c.NetName, err)
	}
}

// FuzzParseConfig: any bytes a caller's size covers parse or fail with
// ncclInvalidArgument, never panic.
func FuzzParseConfig(f *testing.F) {
	init := initializerBytes()
	f.Add(init[:])
	f.Add(cConfig(48, ncclVersion(2, 18, 0), nil)[:48])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > configSize {
			raw = raw[:configSize]
		}
		_, err := parseConfig("f", raw, func(int) string { return "x" })
		if err != nil && resultOf(err) != ncclInvalidArgument {
			t.Fatalf("error %v maps to %v", err, resultOf(err))
		}
	})
}
