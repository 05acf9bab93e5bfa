package flowcontrol

import (
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// t0 is the start of every test's clock.
var t0 = time.Unix(0, 0)

// at returns t0 advanced by d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// wantCode fails the test unless err is a *wire.TransportError with code
// (or nil when code is wire.NoError).
func wantCode(t *testing.T, err error, code wire.TransportErrorCode) {
	t.Helper()
	if code == wire.NoError {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var te *wire.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("error = %v, want %v", err, code)
	}
	if te.Code != code {
		t.Fatalf("error = %v, want code %v", err, code)
	}
	if !errors.Is(err, &wire.TransportError{Code: code}) {
		t.Fatalf("errors.Is(%v, %v) = false", err, code)
	}
}
