//go:build tshark

package tsharktest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/hq"
	"github.com/quicstack/quic/internal/keylog"
	"github.com/quicstack/quic/internal/serve"
)

// A transfer on loopback, captured with tshark, decrypts with the key log
// the client wrote through SSLKEYLOGFILE, and tshark sees its STREAM
// frames; without the key log it sees none.
func TestTsharkDecryptsStreamFrames(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatalf("tshark not found (make check-tshark installs it): %v", err)
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.log")
	pcap := filepath.Join(dir, "quic.pcapng")

	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	// With a key log the example programs turn GSO and GRO off, as here:
	// a capture of a GSO batch shows one UDP datagram holding several
	// QUIC packets, of which Wireshark decrypts only the first.
	s, err := serve.Start(serve.Options{Addr: "127.0.0.1:0", Cert: cert, NoOffload: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port := strconv.Itoa(s.Addr.Port)

	// Start the capture and wait until tshark says it is capturing.
	capture := exec.Command("tshark", "-i", "lo", "-f", "udp port "+port, "-w", pcap)
	stderr, _ := capture.StderrPipe()
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("tshark: ", sc.Text())
			if strings.Contains(sc.Text(), "Capturing on") {
				once.Do(func() { close(started) })
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		capture.Process.Kill()
		t.Fatal("tshark did not start capturing")
	}
	time.Sleep(500 * time.Millisecond) // the capture filter is in place once tshark says so, but be generous

	// The client writes its key log where SSLKEYLOGFILE says, as the
	// example programs do.
	t.Setenv("SSLKEYLOGFILE", keys)
	kl, err := keylog.Open("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tr := &quic.Transport{Conn: udp, DisableGSO: true, DisableGRO: true}
	defer tr.Close()
	c, err := tr.Dial(ctx, s.Addr, &tls.Config{RootCAs: pool, ServerName: "localhost",
		NextProtos: []string{hq.ALPN}, KeyLogWriter: kl}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := hq.Get(ctx, c, "/bytes/200000")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, st); err != nil || n != 200000 {
		t.Fatalf("GET: %d bytes, %v", n, err)
	}
	c.CloseWithError(0, "")
	kl.Close()
	time.Sleep(500 * time.Millisecond)
	capture.Process.Signal(syscall.SIGINT)
	capture.Wait()

	if b, _ := os.ReadFile(keys); !bytes.Contains(b, []byte("CLIENT_TRAFFIC_SECRET_0")) {
		t.Fatalf("key log without 1-RTT secrets:\n%s", b)
	}
	streams := func(args ...string) []string {
		out, err := exec.Command("tshark", append([]string{"-r", pcap, "-Y", "quic.stream.stream_id", "-T", "fields", "-e", "quic.stream.stream_id"}, args...)...).Output()
		if err != nil {
			t.Fatalf("tshark -r: %v", err)
		}
		return strings.Fields(string(out))
	}
	withKeys := streams("-o", "tls.keylog_file:"+keys)
	without := streams()
	t.Logf("packets with STREAM frames: %d decrypted with the key log, %d without", len(withKeys), len(without))
	if len(withKeys) < 100 {
		t.Errorf("tshark decrypted %d packets with STREAM frames, want the whole transfer (>= 100)", len(withKeys))
	}
	if len(without) != 0 {
		t.Errorf("tshark saw %d STREAM frames without the key log", len(without))
	}
}
