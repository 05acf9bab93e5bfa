package main

import (
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"
)

const results = `{"timeout_ns": 60000000000, "sizes": [1000, 1000000], "losses": [0, 0.1, 0.5],
 "protos": [{"Name": "ours-cubic"}, {"Name": "h2"}], "conns": ["new", "reused"],
 "results": [
  {"proto": "ours-cubic", "size": 1000, "loss": 0, "p50_s": 0.2, "p90_s": 0.21},
  {"proto": "ours-cubic", "size": 1000, "loss": 0.1, "p50_s": 0.3, "p90_s": 0.9},
  {"proto": "ours-cubic", "size": 1000, "loss": 0.5, "p50_s": 3, "p90_s": null},
  {"proto": "h2", "size": 1000, "loss": 0, "p50_s": 0.3, "p90_s": 0.31},
  {"proto": "h2", "size": 1000, "loss": 0.5, "p50_s": null, "p90_s": null},
  {"proto": "h2", "reuse": true, "size": 1000000, "loss": 0, "p50_s": 0.6, "p90_s": 0.7},
  {"proto": "h2", "handshake": true, "loss": 0, "p50_s": 0.2, "p90_s": 0.2}
 ]}`

func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "results.json")
	os.WriteFile(in, []byte(results), 0o644)
	if err := run([]string{"-in", in, "-out", dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"latency-1KB.png", "latency-1MB.png", "handshake.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	os.WriteFile(in, []byte(`{"results": []}`), 0o644)
	if err := run([]string{"-in", in, "-out", dir}, io.Discard); err == nil {
		t.Fatal("no results: no error")
	}
}
