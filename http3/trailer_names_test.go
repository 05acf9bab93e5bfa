package http3

import (
	"io"
	"net/http"
	"testing"
)

// The server never generates a trailer field that trailers may not carry:
// "A sender MUST NOT generate a trailer field unless the sender knows the
// corresponding header field name's definition permits the field to be
// sent in trailers." (RFC 9110, Section 6.5.1) Content-Length, Host,
// Authorization and the other fields httpguts.ValidTrailerHeader refuses
// (framing, routing, authentication, controls, content format) are
// dropped, declared or with http.TrailerPrefix, as net/http's HTTP/2
// server drops them; the others are sent. It sent them all.
func TestServerDropsForbiddenTrailers(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "Content-Length, X-Ok, Authorization")
		io.WriteString(w, "body")
		w.(http.Flusher).Flush()
		w.Header().Set("Content-Length", "99")
		w.Header().Set("X-Ok", "1")
		w.Header().Set("Authorization", "Basic x")
		w.Header().Set(http.TrailerPrefix+"Host", "evil.example")
		w.Header().Set(http.TrailerPrefix+"Content-Type", "text/evil")
		w.Header().Set(http.TrailerPrefix+"X-Also-Ok", "2")
	}))
	resp, body := e.get(t, "/")
	if string(body) != "body" {
		t.Fatalf("body %q", body)
	}
	want := http.Header{"X-Ok": {"1"}, "X-Also-Ok": {"2"}}
	for k, vs := range resp.Trailer {
		if len(vs) > 0 && want.Get(k) == "" {
			t.Errorf("trailer %s: %q sent", k, vs)
		}
	}
	for k := range want {
		if resp.Trailer.Get(k) != want.Get(k) {
			t.Errorf("trailer %s: %q, want %q", k, resp.Trailer.Get(k), want.Get(k))
		}
	}
}

// The client never generates them either (RFC 9110, Section 6.5.1): a
// request's Trailer entries that trailers may not carry are neither
// declared nor sent. It sent them all.
func TestClientDropsForbiddenTrailers(t *testing.T) {
	got := make(chan http.Header, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		got <- r.Trailer.Clone()
	}))
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", e.url+"/", pr)
	req.Trailer = http.Header{"Content-Length": nil, "Host": nil, "Authorization": nil, "X-Ok": nil}
	go func() {
		io.WriteString(pw, "body")
		req.Trailer.Set("Content-Length", "99")
		req.Trailer.Set("Host", "evil.example")
		req.Trailer.Set("Authorization", "Basic x")
		req.Trailer.Set("X-Ok", "1")
		pw.Close()
	}()
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tr := <-got
	for k, vs := range tr {
		if k != "X-Ok" && len(vs) > 0 {
			t.Errorf("the server got trailer %s: %q", k, vs)
		}
	}
	if tr.Get("X-Ok") != "1" {
		t.Errorf("trailer X-Ok: %q", tr.Get("X-Ok"))
	}
}
