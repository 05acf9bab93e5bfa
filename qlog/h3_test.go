package qlog_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/qlog"
)

// An HTTP/3 request with qlog on both sides: every record is JSON, and
// the HTTP/3 frames of the request and response appear as
// http3:frame_created on one side and http3:frame_parsed on the other,
// with the fields draft-ietf-quic-qlog-h3-events requires, as do both
// sides' SETTINGS and http3:parameters_set.
func TestHTTP3Events(t *testing.T) {
	dir := t.TempDir()
	stls, ctls := tlsConfigs(t)
	stls.NextProtos = []string{http3.NextProtoH3}
	ctls.NextProtos = nil
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "qlog")
		io.Copy(w, r.Body)
	})
	// Each side parses the other's SETTINGS on a goroutine of its own,
	// which may come after the request: the connections are closed once
	// both did, since a trace ends with the connection's close.
	var settingsParsed sync.WaitGroup
	settingsParsed.Add(2)
	tracer := func(ctx context.Context, isClient bool, odcid quic.ConnectionID) *quic.Tracer {
		tr := qlog.DirTracer(dir)(ctx, isClient, odcid)
		h3 := tr.Application.(*http3.Tracer)
		parsed, once := h3.FrameParsed, new(sync.Once)
		h3.FrameParsed = func(f http3.FrameInfo) {
			parsed(f)
			if http3.FrameTypeName(f.Type) == "settings" {
				once.Do(settingsParsed.Done)
			}
		}
		return tr
	}
	srv := &http3.Server{Handler: mux, TLSConfig: stls, QUICConfig: &quic.Config{Tracer: tracer}}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(pc) }()
	tr := &http3.Transport{TLSClientConfig: ctls, QUICConfig: &quic.Config{Tracer: tracer}}
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	body := strings.Repeat("hello qlog ", 100)
	resp, err := client.Post("https://"+pc.LocalAddr().String()+"/echo", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(got) != body {
		t.Fatalf("echo: %d bytes, %v", len(got), err)
	}
	settingsParsed.Wait()
	tr.Close()
	srv.Close()
	<-served
	pc.Close()

	files := waitTraces(t, dir, 2)
	for _, f := range files {
		role := "server"
		if strings.HasSuffix(f, "_client.sqlog") {
			role = "client"
		}
		if d := os.Getenv("QLOG_TEST_KEEP"); d != "" { // for make qvis-check
			b, _ := os.ReadFile(f)
			os.WriteFile(filepath.Join(d, "h3_"+filepath.Base(f)), b, 0o644)
		}
		checkOpensInDraftAndQvis(t, f)
		_, events := readTrace(t, f)
		type key struct{ name, typ string }
		seen := map[key]int{}
		var params []map[string]any
		var requestHeaders, responseHeaders bool
		var dataBytes = map[string]float64{}
		for _, e := range events {
			if !strings.HasPrefix(e.Name, "http3:") {
				continue
			}
			if e.Name == "http3:parameters_set" {
				params = append(params, e.Data)
				continue
			}
			if e.Name != "http3:frame_created" && e.Name != "http3:frame_parsed" {
				t.Errorf("%s: unexpected event %s", role, e.Name)
				continue
			}
			if _, ok := e.Data["stream_id"].(float64); !ok {
				t.Fatalf("%s: %s without stream_id: %v", role, e.Name, e.Data)
			}
			fr, ok := e.Data["frame"].(map[string]any)
			if !ok {
				t.Fatalf("%s: %s without frame: %v", role, e.Name, e.Data)
			}
			typ, _ := fr["frame_type"].(string)
			raw, _ := fr["raw"].(map[string]any)
			pl, ok := raw["payload_length"].(float64)
			if !ok || raw["length"].(float64) <= pl {
				t.Fatalf("%s: %s without raw lengths: %v", role, e.Name, e.Data)
			}
			seen[key{e.Name, typ}]++
			switch typ {
			case "headers":
				hs, ok := fr["headers"].([]any)
				if !ok || len(hs) == 0 {
					t.Fatalf("%s: headers frame without headers: %v", role, fr)
				}
				fields := map[string]string{}
				for _, h := range hs {
					m := h.(map[string]any)
					fields[m["name"].(string)] = m["value"].(string)
				}
				if fields[":method"] == "POST" && fields[":path"] == "/echo" {
					requestHeaders = true
				}
				if fields[":status"] == "200" && fields["x-test"] == "qlog" {
					responseHeaders = true
				}
			case "data":
				dataBytes[e.Name] += pl
			case "settings":
				ss, ok := fr["settings"].([]any)
				if !ok || len(ss) == 0 {
					t.Fatalf("%s: settings frame without settings: %v", role, fr)
				}
				for _, s := range ss {
					m := s.(map[string]any)
					if _, ok := m["name"].(string); !ok {
						t.Fatalf("%s: setting without name: %v", role, m)
					}
					if _, ok := m["value"].(float64); !ok {
						t.Fatalf("%s: setting without value: %v", role, m)
					}
				}
			}
		}
		for _, k := range []key{
			{"http3:frame_created", "settings"}, {"http3:frame_parsed", "settings"},
			{"http3:frame_created", "headers"}, {"http3:frame_parsed", "headers"},
			{"http3:frame_created", "data"}, {"http3:frame_parsed", "data"},
		} {
			if seen[k] == 0 {
				t.Errorf("%s: no %s of a %s frame (saw %v)", role, k.name, k.typ, seen)
			}
		}
		if !requestHeaders || !responseHeaders {
			t.Errorf("%s: request headers logged %v, response headers %v", role, requestHeaders, responseHeaders)
		}
		if dataBytes["http3:frame_created"] != float64(len(body)) || dataBytes["http3:frame_parsed"] != float64(len(body)) {
			t.Errorf("%s: DATA payload bytes %v, want %d each way", role, dataBytes, len(body))
		}
		initiators := map[any]bool{}
		for _, p := range params {
			initiators[p["initiator"]] = true
			if _, ok := p["max_table_capacity"].(float64); !ok {
				t.Errorf("%s: parameters_set without max_table_capacity: %v", role, p)
			}
		}
		if !initiators["local"] || !initiators["remote"] || len(params) != 2 {
			t.Errorf("%s: parameters_set events %v", role, params)
		}
	}
}

// waitTraces waits until dir holds n complete traces (each file is
// written out and closed when its connection closes, which for the side
// that did not close comes when the peer's CONNECTION_CLOSE arrives) and
// returns their names.
func waitTraces(t *testing.T, dir string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sqlog"))
		complete := 0
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte(`"quic:connection_closed"`)) && bytes.HasSuffix(b, []byte("\n")) {
				complete++
			}
		}
		if len(files) == n && complete == n {
			return files
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d traces complete in %s: %v", complete, n, dir, files)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
