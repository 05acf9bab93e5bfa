package http3

import (
	"testing"
)

// An origin served over both protocols with Alt-Svc: the first request
// goes over TCP (the client knows nothing yet), the later ones over
// HTTP/3, as the server saw them.
func TestAutoBothAltSvc(t *testing.T) {
	o := newOrigin(t, "both")
	a := newAuto(t, o.pool)
	for i := 0; i < 4; i++ {
		proto, body := autoGet(t, a, o.url+"/")
		if proto != body {
			t.Fatalf("request %d: Response.Proto %q, the server saw %q", i, proto, body)
		}
	}
	want := []string{"HTTP/2.0", "HTTP/3.0", "HTTP/3.0", "HTTP/3.0"}
	if got := o.log.list(); !equalStrings(got, want) {
		t.Fatalf("protocols seen by the server: %q; want %q", got, want)
	}
	st := a.Stats()
	t.Logf("%+v", st)
	if st.QUICAttempts != 1 || st.HTTP3Responses != 3 || st.HTTP2Responses != 1 || st.AltSvcUpdates == 0 {
		t.Fatalf("stats %+v", st)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
