package quic

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Transport.Close with an open connection must return once the
// connection's closing period (3 PTO) is over. Regression test: Conn.run
// once kept selecting on the already-closed t.closing channel, so its
// goroutine never blocked and busy-looped for the whole closing period; in
// a synctest bubble (where fake time advances only when every goroutine is
// blocked) that loops forever, and the real-time watchdog turns the hang
// into a failure.
func TestSynctestTransportCloseReturns(t *testing.T) {
	closed := make(chan struct{})
	go func() {
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			panic("Transport.Close did not return: Conn.run busy-loops on the closed Transport.closing channel, so fake time cannot advance to the closing deadline")
		}
	}()
	synctest.Test(t, func(t *testing.T) {
		ctls, stls := testTLS(t)
		sc, cc := newMemConnPair()
		ct, st := &Transport{Conn: cc}, &Transport{Conn: sc}
		if _, err := st.Listen(stls, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ct.Dial(context.Background(), sc.LocalAddr(), ctls, nil); err != nil {
			t.Fatal(err)
		}
		ct.Close() // hangs
		close(closed)
		st.Close()
	})
}
