package qlog_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/qlog"
)

type event struct {
	Time float64        `json:"time"`
	Name string         `json:"name"`
	Data map[string]any `json:"data"`
}

// readTrace parses a .sqlog file: every record must be a JSON text
// preceded by the record separator (RFC 7464).
func readTrace(t *testing.T, path string) (header map[string]any, events []event) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[0] != 0x1e {
		t.Fatalf("%s does not start with a record separator", path)
	}
	for i, rec := range bytes.Split(b[1:], []byte{0x1e}) {
		if !bytes.HasSuffix(rec, []byte("\n")) {
			t.Fatalf("%s: record %d does not end with a newline: %q", path, i, rec)
		}
		if i == 0 {
			if err := json.Unmarshal(rec, &header); err != nil {
				t.Fatalf("%s: header: %v: %s", path, err, rec)
			}
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(rec, &raw); err != nil {
			t.Fatalf("%s: record %d is not JSON: %v: %s", path, i, err, rec)
		}
		for _, f := range []string{"time", "name", "data"} {
			if _, ok := raw[f]; !ok {
				t.Fatalf("%s: record %d has no %q: %s", path, i, f, rec)
			}
		}
		var e event
		if err := json.Unmarshal(rec, &e); err != nil {
			t.Fatalf("%s: record %d: %v: %s", path, i, err, rec)
		}
		if !strings.HasPrefix(e.Name, "quic:") && !strings.HasPrefix(e.Name, "http3:") && !strings.HasPrefix(e.Name, "quicstack:") {
			t.Errorf("%s: event name %q outside the quic, http3 and quicstack namespaces", path, e.Name)
		}
		if len(events) > 0 && e.Time < events[len(events)-1].Time {
			t.Errorf("%s: time goes back at record %d", path, i)
		}
		events = append(events, e)
	}
	return header, events
}

// A real connection over loopback, traced on both sides, gives a qlog
// file per side whose every line is JSON with the events and fields the
// qlog drafts require.
func TestDirTracerLoopback(t *testing.T) {
	dir := t.TempDir()
	stls, ctls := tlsConfigs(t)
	sudp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	cudp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	srv, cli := &quic.Transport{Conn: sudp}, &quic.Transport{Conn: cudp}
	// Packets of an Ethernet path: loopback would carry 64 KB ones, and
	// 1 MB would be too few packets for a key update every 100.
	const maxPacket = 1452
	l, err := srv.Listen(stls, &quic.Config{Tracer: qlog.DirTracer(dir), MaxPacketSize: maxPacket})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.Copy(s, s)
		s.CloseWrite()
		// The stream's context ends when it is finished both ways and
		// released (or the connection ends): wait for the release to be
		// traced before the client closes the connection.
		<-s.Context().Done()
	}()
	c, err := cli.Dial(ctx, l.Addr(), ctls, &quic.Config{Tracer: qlog.DirTracer(dir), KeyUpdateInterval: 100, MaxPacketSize: maxPacket})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	go func() {
		s.Write(make([]byte, size))
		s.CloseWrite()
	}()
	if n, err := io.Copy(io.Discard, s); err != nil || n != size {
		t.Fatalf("echo: %d bytes, %v", n, err)
	}
	<-s.Context().Done()
	<-serverDone
	c.CloseWithError(0x42, "bye")
	cli.Close()
	srv.Close()
	sudp.Close()
	cudp.Close()

	files, _ := filepath.Glob(filepath.Join(dir, "*.sqlog"))
	if d := os.Getenv("QLOG_TEST_KEEP"); d != "" {
		for _, f := range files {
			b, _ := os.ReadFile(f)
			os.WriteFile(filepath.Join(d, filepath.Base(f)), b, 0o644)
		}
	}
	if len(files) != 2 {
		t.Fatalf("qlog files %v, want one per side", files)
	}
	for _, f := range files {
		role := "server"
		if strings.HasSuffix(f, "_client.sqlog") {
			role = "client"
		}
		checkOpensInDraftAndQvis(t, f)
		header, events := readTrace(t, f)
		if header["file_schema"] != "urn:ietf:params:qlog:file:sequential" || header["serialization_format"] != "application/qlog+json-seq" {
			t.Errorf("%s: header %v", role, header)
		}
		trace, _ := header["trace"].(map[string]any)
		vp, _ := trace["vantage_point"].(map[string]any)
		if vp["type"] != role {
			t.Errorf("%s: vantage point %v", role, vp)
		}
		if schemas, _ := trace["event_schemas"].([]any); len(schemas) == 0 {
			t.Errorf("%s: no event_schemas", role)
		}
		seen := map[string]int{}
		triggers := map[string]bool{}
		streamFrames := 0
		for _, e := range events {
			seen[e.Name]++
			switch e.Name {
			case "quic:packet_sent", "quic:packet_received":
				h, _ := e.Data["header"].(map[string]any)
				if _, ok := h["packet_type"].(string); !ok {
					t.Fatalf("%s: %s without header.packet_type: %v", role, e.Name, e.Data)
				}
				if _, ok := h["packet_number"].(float64); !ok {
					t.Fatalf("%s: %s without header.packet_number: %v", role, e.Name, e.Data)
				}
				frames, ok := e.Data["frames"].([]any)
				if !ok || len(frames) == 0 {
					t.Fatalf("%s: %s without frames: %v", role, e.Name, e.Data)
				}
				for _, fr := range frames {
					m := fr.(map[string]any)
					if _, ok := m["frame_type"].(string); !ok {
						t.Fatalf("%s: frame without frame_type: %v", role, m)
					}
					if m["frame_type"] == "stream" {
						streamFrames++
						if _, ok := m["stream_id"].(float64); !ok {
							t.Fatalf("%s: stream frame without stream_id: %v", role, m)
						}
					}
				}
			case "quic:key_updated":
				if _, ok := e.Data["key_type"].(string); !ok {
					t.Fatalf("%s: key_updated without key_type: %v", role, e.Data)
				}
				triggers[e.Data["trigger"].(string)] = true
			case "quic:parameters_set":
				triggers["params_"+e.Data["initiator"].(string)] = true
			case "quic:recovery_metrics_updated":
				if _, ok := e.Data["congestion_window"].(float64); !ok {
					t.Fatalf("%s: metrics without congestion_window: %v", role, e.Data)
				}
			case "quic:stream_state_updated":
				if e.Data["stream_id"] == float64(0) {
					triggers["stream0_"+e.Data["new"].(string)+"_"+e.Data["stream_side"].(string)] = true
				}
			case "quic:connection_started":
				local, _ := e.Data["local"].(map[string]any)
				if local["ip_v4"] != "127.0.0.1" {
					t.Errorf("%s: connection_started %v", role, e.Data)
				}
			case "quic:connection_closed":
				if e.Data["application_error"] != "unknown" || e.Data["error_code"] != float64(0x42) || e.Data["reason"] != "bye" {
					t.Errorf("%s: connection_closed %v", role, e.Data)
				}
			}
		}
		for _, name := range []string{"quic:connection_started", "quic:parameters_set", "quic:packet_sent",
			"quic:packet_received", "quic:recovery_metrics_updated", "quic:key_updated", "quic:connection_closed",
			"quic:alpn_information", "quic:version_information"} {
			if seen[name] == 0 {
				t.Errorf("%s: no %s event (saw %v)", role, name, seen)
			}
		}
		if seen["quic:connection_closed"] != 1 {
			t.Errorf("%s: %d connection_closed events", role, seen["quic:connection_closed"])
		}
		wantUpdate := "local_update"
		if role == "server" {
			wantUpdate = "remote_update"
		}
		for _, tr := range []string{"tls", wantUpdate, "params_local", "params_remote",
			"stream0_open_sending", "stream0_open_receiving", "stream0_closed_sending", "stream0_closed_receiving"} {
			if !triggers[tr] {
				t.Errorf("%s: no %s (saw %v)", role, tr, triggers)
			}
		}
		if streamFrames < size/1500 {
			t.Errorf("%s: %d stream frames for %d bytes each way", role, streamFrames, size)
		}
	}
}

func tlsConfigs(t testing.TB) (server, client *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"t"}}
	client = &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"t"}}
	return server, client
}
