package netem

import (
	"net"
	"testing"
	"time"
)

// readECN reads one datagram from c (with ECN reporting on) and returns
// its payload and ECN codepoint.
func readECN(t *testing.T, c *net.UDPConn) ([]byte, byte, *net.UDPAddr) {
	t.Helper()
	buf, oob := make([]byte, 2000), make([]byte, 128)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, oobn, _, from, err := c.ReadMsgUDP(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n], parseECN(oob[:oobn]), from
}

// With Config.ECN the relay delivers each datagram with the ECN codepoint
// it arrived with, in both directions, and records it; without, it
// bleaches the marks.
func TestProxyECN(t *testing.T) {
	if !ecnSupported {
		t.Skip("ECN relaying needs Linux")
	}
	for _, carry := range []bool{true, false} {
		srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		cl, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for _, c := range []*net.UDPConn{srv, cl} {
			if err := enableECN(c, false); err != nil {
				t.Fatal(err)
			}
		}
		p := newProxy(t, Config{Server: srv.LocalAddr().(*net.UDPAddr), ECN: carry})
		const ect0, ect1, ce = 0b10, 0b01, 0b11
		if _, _, err := cl.WriteMsgUDP(payload(1), ecnControl(ect0, false), p.Addr()); err != nil {
			t.Fatal(err)
		}
		_, got, from := readECN(t, srv)
		if want := map[bool]byte{true: ect0, false: 0}[carry]; got != want {
			t.Errorf("ECN %v: to server: codepoint %02b, want %02b", carry, got, want)
		}
		if _, _, err := srv.WriteMsgUDP(payload(2), ecnControl(ce, false), from); err != nil {
			t.Fatal(err)
		}
		_, got, _ = readECN(t, cl)
		if want := map[bool]byte{true: ce, false: 0}[carry]; got != want {
			t.Errorf("ECN %v: to client: codepoint %02b, want %02b", carry, got, want)
		}
		if _, _, err := cl.WriteMsgUDP(payload(3), ecnControl(ect1, false), p.Addr()); err != nil {
			t.Fatal(err)
		}
		readECN(t, srv)
		p.Close()
		var logged []byte
		for _, r := range p.Log() {
			logged = append(logged, r.ECN)
		}
		want := []byte{ect0, ce, ect1}
		if !carry {
			want = []byte{0, 0, 0}
		}
		if string(logged) != string(want) {
			t.Errorf("ECN %v: logged codepoints %v, want %v", carry, logged, want)
		}
	}
}
