package http3

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// TestServerIdleTimeoutResponseInFlight: Server.IdleTimeout closes a
// connection "that has had no request in progress" for that long; a
// response whose handler returned but whose body is still on its way (the
// client's stream window holds the rest back while it does not read) is
// in progress. The client reads the body after a pause longer than
// closeAfterGoaway's wait for acknowledgements (shutdownDrainTimeout): it
// must get all of it, not a connection closed under it.
//
// Before: the request stopped counting when its handler returned, so the
// idle timer fired IdleTimeout later, and the connection closed once
// shutdownDrainTimeout passed without the response acknowledged, cutting
// it off (read 64 KiB of 512 KiB).
func TestServerIdleTimeoutResponseInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("waits longer than shutdownDrainTimeout")
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), 32<<10) // 512 KiB
	returned := make(chan struct{}, 1)
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body) // fits the stream's send buffer: returns at once
		returned <- struct{}{}
	}), func(s *Server) { s.IdleTimeout = 100 * time.Millisecond })
	e.tr.QUICConfig = &quic.Config{
		InitialStreamReceiveWindow: 64 << 10,
		MaxStreamReceiveWindow:     64 << 10,
	}
	resp, err := e.client.Get(e.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-returned
	time.Sleep(shutdownDrainTimeout + 3*time.Second)
	got, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d of %d bytes, %v", len(got), len(body), err)
	}
}
