package quic

import (
	"bytes"
	"crypto/tls"
	"testing"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// crypto/tls owns the secrets it hands over: "The contents are owned by
// crypto/tls, and are valid until the next NextEvent call" (QUICEvent.Data).
// A server's 1-RTT keys are expanded on first use (handshake.OneRTTKeys), so
// installSecret must keep copies of the secrets, not the event's memory:
// here the event data is overwritten after installSecret, as crypto/tls may
// do, and the keys must still be those of the original secrets.
func TestInstallSecretDoesNotRetainTLSData(t *testing.T) {
	_, stls := testTLS(t)
	dcid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	now := time.Unix(0, 0)
	c, err := newConnState(now, wire.RoleServer, (*Config)(nil).withDefaults(), connParams{
		tls: stls, connIDGen: &testConnIDGen{next: 0x7000}, peerConnID: dcid, origDstConnID: dcid, version: wire.Version1,
	})
	if err != nil {
		t.Fatal(err)
	}
	const suite = tls.TLS_AES_128_GCM_SHA256
	serverSecret := bytes.Repeat([]byte{0x11}, 32)
	clientSecret := bytes.Repeat([]byte{0x22}, 32)
	for _, ev := range []handshake.Event{
		{Kind: handshake.EventWriteSecret, Level: handshake.LevelApplication, Suite: suite, Data: serverSecret},
		{Kind: handshake.EventReadSecret, Level: handshake.LevelApplication, Suite: suite, Data: clientSecret},
	} {
		data := append([]byte(nil), ev.Data...)
		ev.Data = data
		if err := c.installSecret(now, ev); err != nil {
			t.Fatal(err)
		}
		clear(data) // crypto/tls's memory, reused after the next NextEvent
	}
	client, err := handshake.NewOneRTTKeys(suite, wire.Version1, clientSecret, serverSecret)
	if err != nil {
		t.Fatal(err)
	}
	seal := func(k *handshake.OneRTTKeys) []byte {
		b := make([]byte, 0, 100)
		h := wire.ShortHeader{DstConnID: dcid}
		b = h.Append(b, 0, 1)
		b = append(b, make([]byte, 30)...)
		out, err := k.Seal(b, 1+dcid.Len(), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if _, _, err := client.Open(now, seal(c.oneRTT), 1+dcid.Len(), wire.InvalidPacketNumber); err != nil {
		t.Errorf("server's 1-RTT write keys are not those of its write secret: %v", err)
	}
	if _, _, err := c.oneRTT.Open(now, seal(client), 1+dcid.Len(), wire.InvalidPacketNumber); err != nil {
		t.Errorf("server's 1-RTT read keys are not those of its read secret: %v", err)
	}
}
