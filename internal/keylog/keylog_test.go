package keylog

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	t.Setenv("SSLKEYLOGFILE", "")
	if w, err := Open(""); w != nil || err != nil {
		t.Fatalf("Open with nothing set: %v, %v", w, err)
	}
	env := filepath.Join(t.TempDir(), "env.log")
	t.Setenv("SSLKEYLOGFILE", env)
	w, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("CLIENT_RANDOM x y\n"))
	w.Close()
	if b, _ := os.ReadFile(env); string(b) != "CLIENT_RANDOM x y\n" {
		t.Errorf("SSLKEYLOGFILE got %q", b)
	}
	flag := filepath.Join(t.TempDir(), "flag.log")
	w, err = Open(flag)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(flag); err != nil {
		t.Errorf("the flag's file takes precedence: %v", err)
	}
}
