package main

import (
	"bytes"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-h"}, &out, &errOut, nil); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	for _, f := range []string{"-drops-to-server", "-corrupt-rate", "-rebind-addr", "-blackhole-on", "-seed"} {
		if !strings.Contains(errOut.String(), f) {
			t.Errorf("help lacks %s:\n%s", f, errOut.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"-server", "127.0.0.1:1", "-drop-rate", "101"},
		{"-server", "127.0.0.1:1", "-drops-to-server", "0"}, {"-bogus"}, {"-server", "127.0.0.1:1", "extra"}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut, nil); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestFlagsToScenario(t *testing.T) {
	cfg, _, err := parseConfig([]string{"-server", "127.0.0.1:443", "-drops-to-server", "2,3", "-corrupt-rate", "30",
		"-corrupt-burst", "3", "-rebind-first", "1s", "-rebind-addr", "-bandwidth", "5", "-queue", "10"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.Scenario
	if len(sc.DropList[0]) != 2 || sc.Corrupt[1].Percent != 30 || sc.Corrupt[0].Burst != 3 ||
		sc.Rebind.First != time.Second || !sc.Rebind.Addr || cfg.Link[0].Bandwidth != 5e6 || cfg.Link[1].Queue != 10 {
		t.Fatalf("config %+v", cfg)
	}
}

// The relay forwards a datagram and its reply, and prints its counters
// when stopped.
func TestRelay(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 100)
		n, from, err := srv.ReadFromUDP(buf)
		if err == nil {
			srv.WriteToUDP(buf[:n], from)
		}
	}()
	stop := make(chan os.Signal)
	pr, pw, _ := os.Pipe()
	done := make(chan int)
	go func() {
		done <- run([]string{"-server", srv.LocalAddr().String(), "-delay", "1ms"}, pw, os.Stderr, stop)
	}()
	line := make([]byte, 200)
	n, _ := pr.Read(line)
	f := strings.Fields(string(line[:n]))
	if len(f) < 5 {
		t.Fatalf("first line %q", line[:n])
	}
	c, err := net.Dial("udp", f[2])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(line); err != nil || string(line[:n]) != "ping" {
		t.Fatalf("reply %q %v", line[:n], err)
	}
	close(stop)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	pw.Close()
	rest, _ := readAll(pr)
	if !strings.Contains(rest, "to-server: 1 received, 1 delivered") {
		t.Fatalf("counters:\n%s", rest)
	}
}

func readAll(f *os.File) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.String(), err
}
