package rdma

import "testing"

func TestBlobRoundTrip(t *testing.T) {
	b := blob{role: roleRecv, qpn: 0x1234, psn: 0xabcdef, addr: PortAddr{LID: 7, GID: [16]byte{0xfe, 0x80, 15: 1}, Global: true, MTU: 5},
		connAddr: 1 << 40, connLen: 99, connRKey: 42, ctrlAddr: 1<<40 + 4096, ctrlRKey: 43, ctrlLen: ctrlBytes}
	got, err := decodeBlob(b.encode())
	if err != nil || got != b {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", b, got, err)
	}
	for i := range blobBytes {
		if i >= 12 { // fields past the header take any value
			break
		}
		bad := b.encode()
		bad[i] ^= 0x80
		if _, err := decodeBlob(bad); err == nil && i != 6 && i != 8 && i != 9 {
			t.Errorf("a blob with byte %d flipped decodes", i)
		}
	}
}
