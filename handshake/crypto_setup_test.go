package handshake

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// testPKI is a CA with a server and a client certificate, made once per run.
type testPKI struct {
	roots      *x509.CertPool
	serverCert tls.Certificate
	clientCert tls.Certificate
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) tls.Certificate {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	p := &testPKI{roots: x509.NewCertPool()}
	p.roots.AddCert(ca)
	p.serverCert = leaf(2, "localhost", x509.ExtKeyUsageServerAuth)
	p.clientCert = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

func (p *testPKI) serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.serverCert}, NextProtos: []string{"h3"}}
}

func (p *testPKI) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: p.roots, ServerName: "localhost", NextProtos: []string{"h3"},
		ClientSessionCache: tls.NewLRUClientSessionCache(4)}
}

func mustPrepare(t testing.TB, c *tls.Config) *tls.Config {
	t.Helper()
	p, err := PrepareTLSConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testParams(role wire.Role) wire.TransportParameters {
	p := wire.DefaultTransportParameters()
	p.InitialMaxData = 1 << 20
	p.InitialMaxStreamDataBidiLocal = 1 << 18
	p.InitialMaxStreamDataBidiRemote = 1 << 18
	p.InitialMaxStreamDataUni = 1 << 18
	p.InitialMaxStreamsBidi = 100
	p.InitialMaxStreamsUni = 10
	p.MaxIdleTimeout = 30 * time.Second
	p.InitialSourceConnectionID = wire.NewConnectionID([]byte{byte(role), 1, 2, 3})
	p.HasInitialSourceConnectionID = true
	if role == wire.RoleServer {
		p.OriginalDestinationConnectionID = wire.NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9})
		p.HasOriginalDestinationConnectionID = true
	}
	return p
}

// endpoint records what one side's CryptoSetup asked for.
type endpoint struct {
	cs        *CryptoSetup
	inbox     [4][]byte // CRYPTO data from the peer, per level
	sent      [4]int    // CRYPTO bytes sent, per level
	readKeys  map[EncryptionLevel]uint16
	writeKeys map[EncryptionLevel]uint16
	events    []EventKind
	err       error
}

func newEndpoint(t *testing.T, cs *CryptoSetup) *endpoint {
	return &endpoint{cs: cs, readKeys: map[EncryptionLevel]uint16{}, writeKeys: map[EncryptionLevel]uint16{}}
}

// drain acts on the events of e, sending CRYPTO data to peer. It reports
// whether anything happened.
func (e *endpoint) drain(peer *endpoint) bool {
	progress := false
	for e.err == nil {
		ev, err := e.cs.NextEvent()
		if err != nil {
			e.err = err
			return true
		}
		if ev.Kind == EventNone {
			break
		}
		progress = true
		e.events = append(e.events, ev.Kind)
		switch ev.Kind {
		case EventWriteCrypto:
			peer.inbox[ev.Level] = append(peer.inbox[ev.Level], ev.Data...)
			e.sent[ev.Level] += len(ev.Data)
		case EventReadSecret:
			e.readKeys[ev.Level] = ev.Suite
			// The secret must make working keys for the suite.
			if _, err := NewOpener(ev.Suite, wire.Version1, ev.Data); err != nil {
				e.err = err
			}
		case EventWriteSecret:
			e.writeKeys[ev.Level] = ev.Suite
			if _, err := NewSealer(ev.Suite, wire.Version1, ev.Data); err != nil {
				e.err = err
			}
		}
	}
	return progress
}

// deliver hands e the CRYPTO data waiting for it, level by level, but only
// at levels it has read keys for, as a connection would.
func (e *endpoint) deliver() bool {
	progress := false
	for l := LevelInitial; l <= LevelApplication; l++ {
		if len(e.inbox[l]) == 0 || e.err != nil {
			continue
		}
		if _, ok := e.readKeys[l]; !ok && l != LevelInitial {
			continue
		}
		data := e.inbox[l]
		e.inbox[l] = nil
		if err := e.cs.HandleCrypto(l, data); err != nil {
			e.err = err
		}
		progress = true
	}
	return progress
}

// runHandshake drives client and server until neither makes progress.
func runHandshake(t *testing.T, clientCfg, serverCfg *Config) (c, s *endpoint) {
	t.Helper()
	if clientCfg.TLS.MinVersion == 0 {
		clientCfg.TLS = mustPrepare(t, clientCfg.TLS)
	}
	if serverCfg.TLS.MinVersion == 0 {
		serverCfg.TLS = mustPrepare(t, serverCfg.TLS)
	}
	ccs, err := NewClient(clientCfg)
	if err != nil {
		t.Fatal(err)
	}
	scs, err := NewServer(serverCfg)
	if err != nil {
		t.Fatal(err)
	}
	c, s = newEndpoint(t, ccs), newEndpoint(t, scs)
	s.readKeys[LevelInitial], c.readKeys[LevelInitial] = 0, 0
	if err := ccs.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := scs.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		p := c.drain(s)
		p = s.drain(c) || p
		p = s.deliver() || p
		p = c.deliver() || p
		if !p {
			return c, s
		}
	}
	t.Fatal("handshake did not settle")
	return nil, nil
}

func cryptoCode(err error) (wire.TransportErrorCode, bool) {
	var te *wire.TransportError
	if !errors.As(err, &te) {
		return 0, false
	}
	return te.Code, true
}

func TestHandshakeFull(t *testing.T) {
	pki := newTestPKI(t)
	c, s := runHandshake(t,
		&Config{TLS: pki.clientTLS(), Params: testParams(wire.RoleClient)},
		&Config{TLS: pki.serverTLS(), Params: testParams(wire.RoleServer)})
	if c.err != nil || s.err != nil {
		t.Fatalf("client err %v, server err %v", c.err, s.err)
	}
	for _, e := range []*endpoint{c, s} {
		if !e.cs.HandshakeComplete() {
			t.Fatal("handshake not complete")
		}
		for _, l := range []EncryptionLevel{LevelHandshake, LevelApplication} {
			if _, ok := e.readKeys[l]; !ok {
				t.Errorf("no %v read secret", l)
			}
			if _, ok := e.writeKeys[l]; !ok {
				t.Errorf("no %v write secret", l)
			}
		}
		if _, ok := e.writeKeys[LevelEarlyData]; ok {
			t.Error("0-RTT keys in a first handshake")
		}
		st := e.cs.ConnectionState()
		if st.NegotiatedProtocol != "h3" || st.Version != tls.VersionTLS13 || st.DidResume {
			t.Errorf("state: alpn %q version %x resumed %v", st.NegotiatedProtocol, st.Version, st.DidResume)
		}
	}
	if c.readKeys[LevelApplication] != c.writeKeys[LevelApplication] || c.readKeys[LevelApplication] != s.writeKeys[LevelApplication] {
		t.Error("the two sides disagree on the cipher suite")
	}
	// Each side got the other's parameters, validated.
	if p := c.cs.PeerParams(); p == nil || p.OriginalDestinationConnectionID != testParams(wire.RoleServer).OriginalDestinationConnectionID || p.InitialMaxData != 1<<20 {
		t.Fatalf("client's view of server params: %+v", p)
	}
	if p := s.cs.PeerParams(); p == nil || p.InitialSourceConnectionID != testParams(wire.RoleClient).InitialSourceConnectionID {
		t.Fatalf("server's view of client params: %+v", p)
	}
	// The server verified nothing of the client, the client verified the
	// server's chain.
	if len(c.cs.ConnectionState().VerifiedChains) == 0 {
		t.Error("client did not verify the server certificate")
	}
	if c.cs.EarlyDataAccepted() || s.cs.EarlyDataAccepted() {
		t.Error("0-RTT reported in a first handshake")
	}
}

// resume runs a first handshake so the client caches a session, then a
// second one with the given server parameters, and returns the second pair.
func resume(t *testing.T, pki *testPKI, clientTLS, serverTLS1, serverTLS2 *tls.Config, serverParams2 wire.TransportParameters) (c, s *endpoint) {
	t.Helper()
	c1, s1 := runHandshake(t,
		&Config{TLS: clientTLS, Params: testParams(wire.RoleClient), EnableEarlyData: true},
		&Config{TLS: serverTLS1, Params: testParams(wire.RoleServer), EnableEarlyData: true})
	if c1.err != nil || s1.err != nil {
		t.Fatalf("first handshake: %v / %v", c1.err, s1.err)
	}
	return runHandshake(t,
		&Config{TLS: clientTLS, Params: testParams(wire.RoleClient), EnableEarlyData: true},
		&Config{TLS: serverTLS2, Params: serverParams2, EnableEarlyData: true})
}

func TestHandshakeResumptionWithEarlyData(t *testing.T) {
	pki := newTestPKI(t)
	clientTLS, serverTLS := mustPrepare(t, pki.clientTLS()), mustPrepare(t, pki.serverTLS())
	c, s := resume(t, pki, clientTLS, serverTLS, serverTLS, testParams(wire.RoleServer))
	if c.err != nil || s.err != nil {
		t.Fatalf("client err %v, server err %v", c.err, s.err)
	}
	if !c.cs.ConnectionState().DidResume || !s.cs.ConnectionState().DidResume {
		t.Fatal("session not resumed")
	}
	// A resumed handshake carries no certificate: the server's whole
	// Handshake flight is smaller than its certificate alone.
	if certLen := len(pki.serverCert.Certificate[0]); s.sent[LevelHandshake] >= certLen {
		t.Errorf("server sent %d Handshake bytes; its certificate alone is %d", s.sent[LevelHandshake], certLen)
	}
	if _, ok := c.writeKeys[LevelEarlyData]; !ok {
		t.Fatal("client got no 0-RTT write secret")
	}
	if _, ok := s.readKeys[LevelEarlyData]; !ok {
		t.Fatal("server got no 0-RTT read secret")
	}
	if !c.cs.EarlyDataAccepted() || !s.cs.EarlyDataAccepted() {
		t.Fatalf("EarlyDataAccepted: client %v server %v", c.cs.EarlyDataAccepted(), s.cs.EarlyDataAccepted())
	}
	r, ok := c.cs.RememberedParams()
	if !ok || r != RememberParams(ptr(testParams(wire.RoleServer))) {
		t.Fatalf("client remembered %+v (%v)", r, ok)
	}
	for _, k := range c.events {
		if k == EventEarlyDataRejected {
			t.Fatal("0-RTT rejected")
		}
	}
}

func ptr[T any](v T) *T { return &v }

// RFC 9000, Section 7.4.1: "the server MUST NOT reduce any limits or alter
// any values that might be violated by the client with its 0-RTT data" —
// a server that did must reject 0-RTT, and the client must learn it.
func TestHandshakeEarlyDataRejectedAfterLimitLowered(t *testing.T) {
	pki := newTestPKI(t)
	clientTLS, serverTLS := mustPrepare(t, pki.clientTLS()), mustPrepare(t, pki.serverTLS())
	lowered := testParams(wire.RoleServer)
	lowered.InitialMaxData /= 2
	c, s := resume(t, pki, clientTLS, serverTLS, serverTLS, lowered)
	if c.err != nil || s.err != nil {
		t.Fatalf("client err %v, server err %v", c.err, s.err)
	}
	if !c.cs.ConnectionState().DidResume {
		t.Fatal("session not resumed")
	}
	if _, ok := c.writeKeys[LevelEarlyData]; !ok {
		t.Fatal("client did not attempt 0-RTT")
	}
	if _, ok := s.readKeys[LevelEarlyData]; ok {
		t.Fatal("server accepted 0-RTT despite a lowered limit")
	}
	rejected := false
	for _, k := range c.events {
		rejected = rejected || k == EventEarlyDataRejected
	}
	if !rejected || c.cs.EarlyDataAccepted() || s.cs.EarlyDataAccepted() {
		t.Fatalf("rejection not reported: event %v, client %v, server %v", rejected, c.cs.EarlyDataAccepted(), s.cs.EarlyDataAccepted())
	}
}

// Servers of a fleet sharing session ticket keys resume each other's
// sessions.
func TestHandshakeResumptionAcrossFleet(t *testing.T) {
	pki := newTestPKI(t)
	key := [32]byte{1, 2, 3}
	a, b := pki.serverTLS(), pki.serverTLS()
	a.SetSessionTicketKeys([][32]byte{key})
	b.SetSessionTicketKeys([][32]byte{key})
	c, s := resume(t, pki, mustPrepare(t, pki.clientTLS()), mustPrepare(t, a), mustPrepare(t, b), testParams(wire.RoleServer))
	if c.err != nil || s.err != nil || !s.cs.ConnectionState().DidResume || !s.cs.EarlyDataAccepted() {
		t.Fatalf("err %v/%v resumed %v 0-RTT %v", c.err, s.err, s.cs.ConnectionState().DidResume, s.cs.EarlyDataAccepted())
	}
}

func TestHandshakeFailures(t *testing.T) {
	pki := newTestPKI(t)
	for _, tc := range []struct {
		name          string
		client        func(*tls.Config)
		server        func(*tls.Config)
		clientCode    wire.TransportErrorCode // 0: don't check
		serverCode    wire.TransportErrorCode
		clientWantErr bool
	}{
		{
			name:   "ALPN mismatch",
			server: func(c *tls.Config) { c.NextProtos = []string{"other"} },
			// RFC 9001, Section 8.1: no_application_protocol (120).
			serverCode: wire.CryptoError(120),
		},
		{
			name: "client certificate required and missing",
			server: func(c *tls.Config) {
				c.ClientAuth = tls.RequireAndVerifyClientCert
				c.ClientCAs = pki.roots
			},
			// TLS 1.3 certificate_required (116).
			serverCode: wire.CryptoError(116),
		},
		{
			name:   "untrusted server certificate",
			client: func(c *tls.Config) { c.RootCAs = x509.NewCertPool() },
			// bad_certificate (42).
			clientCode: wire.CryptoError(42),
		},
		{
			name:       "wrong server name",
			client:     func(c *tls.Config) { c.ServerName = "example.com" },
			clientCode: wire.CryptoError(42),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, st := pki.clientTLS(), pki.serverTLS()
			if tc.client != nil {
				tc.client(ct)
			}
			if tc.server != nil {
				tc.server(st)
			}
			c, s := runHandshake(t,
				&Config{TLS: ct, Params: testParams(wire.RoleClient)},
				&Config{TLS: st, Params: testParams(wire.RoleServer)})
			if c.cs.HandshakeComplete() && s.cs.HandshakeComplete() {
				t.Fatal("handshake completed")
			}
			if tc.serverCode != 0 {
				if code, ok := cryptoCode(s.err); !ok || code != tc.serverCode {
					t.Fatalf("server error %v; want %v", s.err, tc.serverCode)
				}
			}
			if tc.clientCode != 0 {
				if code, ok := cryptoCode(c.err); !ok || code != tc.clientCode {
					t.Fatalf("client error %v; want %v", c.err, tc.clientCode)
				}
			}
		})
	}
}

func TestHandshakeClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	ct, st := pki.clientTLS(), pki.serverTLS()
	ct.Certificates = []tls.Certificate{pki.clientCert}
	st.ClientAuth = tls.RequireAndVerifyClientCert
	st.ClientCAs = pki.roots
	c, s := runHandshake(t,
		&Config{TLS: ct, Params: testParams(wire.RoleClient)},
		&Config{TLS: st, Params: testParams(wire.RoleServer)})
	if c.err != nil || s.err != nil {
		t.Fatalf("client err %v, server err %v", c.err, s.err)
	}
	if len(s.cs.ConnectionState().VerifiedChains) == 0 {
		t.Fatal("server did not verify the client certificate")
	}
}

func TestHandshakeRejectsBadPeerParams(t *testing.T) {
	pki := newTestPKI(t)
	sp := testParams(wire.RoleServer)
	sp.HasOriginalDestinationConnectionID = false // a server must send it
	c, _ := runHandshake(t,
		&Config{TLS: pki.clientTLS(), Params: testParams(wire.RoleClient)},
		&Config{TLS: pki.serverTLS(), Params: sp})
	if code, ok := cryptoCode(c.err); !ok || code != wire.TransportParameterError {
		t.Fatalf("client error %v; want TRANSPORT_PARAMETER_ERROR", c.err)
	}
}

func TestNewCryptoSetupRequiresPreparedConfig(t *testing.T) {
	if _, err := PrepareTLSConfig(&tls.Config{}); err == nil {
		t.Fatal("config without NextProtos accepted")
	}
	if _, err := NewClient(&Config{TLS: &tls.Config{NextProtos: []string{"h3"}}}); err == nil {
		t.Fatal("config allowing TLS 1.2 accepted")
	}
	orig := &tls.Config{NextProtos: []string{"h3"}}
	if p := mustPrepare(t, orig); p.MinVersion != tls.VersionTLS13 || orig.MinVersion != 0 {
		t.Fatal("PrepareTLSConfig did not raise MinVersion on a copy")
	}
	if _, err := NewServer(&Config{}); err == nil {
		t.Fatal("config without tls.Config accepted")
	}
}

func TestRememberedParamsEncoding(t *testing.T) {
	r := RememberParams(ptr(testParams(wire.RoleServer)))
	r.MaxDatagramFrameSize, r.ResetStreamAt = 1200, true
	got, ok := findRememberedParams(&tls.SessionState{Extra: [][]byte{[]byte("other"), r.marshal()}})
	if !ok || got != r {
		t.Fatalf("round trip gave %+v, %v", got, ok)
	}
	enc := r.marshal()
	for i := len(sessionExtraPrefix); i < len(enc); i++ {
		if _, ok := unmarshalRememberedParams(enc[len(sessionExtraPrefix):i]); ok {
			t.Fatalf("truncated encoding of %d bytes accepted", i)
		}
	}
	lower := r
	lower.InitialMaxStreamsBidi--
	if !lower.AllowsEarlyDataUnder(r) || r.AllowsEarlyDataUnder(lower) {
		t.Fatal("AllowsEarlyDataUnder ignores stream limits")
	}
	off := r
	off.ResetStreamAt = false
	if r.AllowsEarlyDataUnder(off) {
		t.Fatal("switching reset_stream_at off kept 0-RTT")
	}
	if p := r.TransportParameters(); p.InitialMaxData != r.InitialMaxData || p.MaxUDPPayloadSize != 65527 {
		t.Fatalf("TransportParameters = %+v", p)
	}
}

// The tls.Config features users rely on work through the driver:
// GetCertificate chooses a certificate by SNI, VerifyPeerCertificate runs,
// and KeyLogWriter receives the secrets in SSLKEYLOGFILE format.
func TestHandshakeTLSConfigFeatures(t *testing.T) {
	pki := newTestPKI(t)
	var keyLog strings.Builder
	var sni string
	verified := false
	ct, st := pki.clientTLS(), pki.serverTLS()
	ct.KeyLogWriter = &keyLog
	ct.VerifyPeerCertificate = func(raw [][]byte, chains [][]*x509.Certificate) error {
		verified = len(raw) == 1 && len(chains) > 0
		return nil
	}
	st.Certificates = nil
	st.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		sni = hello.ServerName
		return &pki.serverCert, nil
	}
	c, s := runHandshake(t,
		&Config{TLS: ct, Params: testParams(wire.RoleClient)},
		&Config{TLS: st, Params: testParams(wire.RoleServer)})
	if c.err != nil || s.err != nil {
		t.Fatalf("client err %v, server err %v", c.err, s.err)
	}
	if sni != "localhost" {
		t.Errorf("GetCertificate saw SNI %q", sni)
	}
	if !verified {
		t.Error("VerifyPeerCertificate not called with the chain")
	}
	for _, label := range []string{"CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
		"CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"} {
		if !strings.Contains(keyLog.String(), label+" ") {
			t.Errorf("key log lacks %s:\n%s", label, keyLog.String())
		}
	}
}

// A VerifyPeerCertificate rejection closes with the alert crypto/tls sends
// for it (bad_certificate, 42).
func TestHandshakeVerifyPeerCertificateRejects(t *testing.T) {
	pki := newTestPKI(t)
	ct := pki.clientTLS()
	ct.VerifyPeerCertificate = func([][]byte, [][]*x509.Certificate) error { return errors.New("pinned key mismatch") }
	c, _ := runHandshake(t,
		&Config{TLS: ct, Params: testParams(wire.RoleClient)},
		&Config{TLS: pki.serverTLS(), Params: testParams(wire.RoleServer)})
	if code, ok := cryptoCode(c.err); !ok || code != wire.CryptoError(42) {
		t.Fatalf("client error %v; want CRYPTO_ERROR(bad_certificate)", c.err)
	}
}

// A server releases crypto/tls once its handshake is done; its state stays
// readable and post-handshake CRYPTO data from the client is an unexpected
// message. A client keeps its TLS connection for session tickets.
func TestReleaseIfDone(t *testing.T) {
	pki := newTestPKI(t)
	c, s := runHandshake(t,
		&Config{TLS: pki.clientTLS(), Params: testParams(wire.RoleClient)},
		&Config{TLS: pki.serverTLS(), Params: testParams(wire.RoleServer)})
	if c.err != nil || s.err != nil {
		t.Fatalf("client err %v, server err %v", c.err, s.err)
	}
	c.cs.ReleaseIfDone()
	s.cs.ReleaseIfDone()
	if c.cs.conn == nil {
		t.Fatal("client released its TLS connection")
	}
	if s.cs.conn != nil {
		t.Fatal("server kept its TLS connection after the handshake")
	}
	if st := s.cs.ConnectionState(); st.NegotiatedProtocol != "h3" || st.Version != tls.VersionTLS13 {
		t.Fatalf("released state: alpn %q version %x", st.NegotiatedProtocol, st.Version)
	}
	if ev, err := s.cs.NextEvent(); err != nil || ev.Kind != EventNone {
		t.Fatalf("NextEvent after release: %v, %v", ev.Kind, err)
	}
	err := s.cs.HandleCrypto(LevelApplication, []byte{4, 0, 0, 0})
	if code, ok := cryptoCode(err); !ok || code != wire.CryptoError(alertUnexpectedMessage) {
		t.Fatalf("post-handshake CRYPTO data after release: %v", err)
	}
	if err := s.cs.Close(); err != nil {
		t.Fatal(err)
	}
}

// A server sends a session ticket only to a client that can resume: one
// whose ClientHello has psk_key_exchange_modes, which a Go client sends
// when it has a ClientSessionCache (RFC 8446, Section 4.2.9). The user's
// GetConfigForClient still runs.
func TestSessionTicketOnlyToResumingClients(t *testing.T) {
	pki := newTestPKI(t)
	for _, withCache := range []bool{false, true} {
		ctls := pki.clientTLS() // with a cache
		if !withCache {
			ctls.ClientSessionCache = nil
		}
		stls := pki.serverTLS()
		hookCalls := 0
		stls.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			hookCalls++
			return nil, nil
		}
		c, s := runHandshake(t,
			&Config{TLS: ctls, Params: testParams(wire.RoleClient)},
			&Config{TLS: stls, Params: testParams(wire.RoleServer)})
		if c.err != nil || s.err != nil || !s.cs.HandshakeComplete() {
			t.Fatalf("cache %v: client err %v, server err %v", withCache, c.err, s.err)
		}
		if hookCalls != 1 {
			t.Errorf("cache %v: the user's GetConfigForClient ran %d times, want 1", withCache, hookCalls)
		}
		// The ticket is the server's only 1-RTT CRYPTO data.
		if got := s.sent[LevelApplication] > 0; got != withCache {
			t.Errorf("cache %v: server sent %d bytes of 1-RTT CRYPTO data (a ticket: %v)", withCache, s.sent[LevelApplication], got)
		}
	}
}

// RFC 9000, Section 7.4.1: "A client that attempts to send 0-RTT data MUST
// remember all other transport parameters used by the server that it is
// able to process" (all but ack_delay_exponent, max_ack_delay,
// initial_source_connection_id, original_destination_connection_id,
// preferred_address, retry_source_connection_id and
// stateless_reset_token): max_idle_timeout, max_udp_payload_size,
// disable_active_migration and grease_quic_bit were not kept.
func TestRememberedParamsKeepAllOthers(t *testing.T) {
	p := testParams(wire.RoleServer)
	p.MaxIdleTimeout = 7 * time.Second
	p.MaxUDPPayloadSize = 1350
	p.DisableActiveMigration = true
	p.GreaseQUICBit = true
	p.MaxDatagramFrameSize = 1200
	p.ActiveConnectionIDLimit = 4
	// Parameters the client must not remember take other values.
	p.AckDelayExponent, p.MaxAckDelay = 10, 100*time.Millisecond
	p.StatelessResetToken, p.HasStatelessResetToken = wire.StatelessResetToken{1}, true
	r := RememberParams(&p)
	got, ok := findRememberedParams(&tls.SessionState{Extra: [][]byte{r.marshal()}})
	if !ok || got != r {
		t.Fatalf("round trip gave %+v, %v; want %+v", got, ok, r)
	}
	tp := got.TransportParameters()
	if tp.MaxIdleTimeout != p.MaxIdleTimeout || tp.MaxUDPPayloadSize != p.MaxUDPPayloadSize ||
		!tp.DisableActiveMigration || !tp.GreaseQUICBit || tp.MaxDatagramFrameSize != 1200 || tp.ActiveConnectionIDLimit != 4 {
		t.Errorf("remembered transport parameters %+v", tp)
	}
	// "A client MUST NOT use remembered values for the following
	// parameters: ack_delay_exponent, max_ack_delay, ...
	// stateless_reset_token."
	if d := wire.DefaultTransportParameters(); tp.AckDelayExponent != d.AckDelayExponent || tp.MaxAckDelay != d.MaxAckDelay || tp.HasStatelessResetToken {
		t.Errorf("parameters the client must not remember: %+v", tp)
	}
	// "A server MAY store and recover the previously sent values of the
	// max_idle_timeout, max_udp_payload_size, and disable_active_migration
	// parameters and reject 0-RTT if it selects smaller values. ...
	// lowering the max_udp_payload_size could result in dropped packets":
	// a client sends 0-RTT datagrams as large as the remembered value.
	smaller := r
	smaller.MaxUDPPayloadSize = 1252
	if r.AllowsEarlyDataUnder(smaller) || !smaller.AllowsEarlyDataUnder(r) {
		t.Error("AllowsEarlyDataUnder ignores max_udp_payload_size")
	}
}

// RFC 9001, Section 4.1.3: "When TLS provides keys for a higher encryption
// level, if there is data from a previous encryption level that TLS has
// not consumed, this MUST be treated as a connection error of type
// PROTOCOL_VIOLATION." crypto/tls reports it, and data at a level it does
// not read, as internal errors without a type; toTransportError knows them
// by their text, which this test pins: a ServerHello followed by more
// Initial data, and Handshake data before the ServerHello.
func TestCryptoErrorsOfPreviousLevel(t *testing.T) {
	pki := newTestPKI(t)
	start := func() (c, s *endpoint) {
		ccs, err := NewClient(&Config{TLS: mustPrepare(t, pki.clientTLS()), Params: testParams(wire.RoleClient)})
		if err != nil {
			t.Fatal(err)
		}
		scs, err := NewServer(&Config{TLS: mustPrepare(t, pki.serverTLS()), Params: testParams(wire.RoleServer)})
		if err != nil {
			t.Fatal(err)
		}
		c, s = newEndpoint(t, ccs), newEndpoint(t, scs)
		if err := ccs.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := scs.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		c.drain(s)
		if err := scs.HandleCrypto(LevelInitial, s.inbox[LevelInitial]); err != nil {
			t.Fatal(err)
		}
		s.drain(c)
		if len(c.inbox[LevelInitial]) == 0 {
			t.Fatal("no ServerHello")
		}
		return c, s
	}
	isViolation := func(err error) bool {
		var te *wire.TransportError
		return errors.As(err, &te) && te.Code == wire.ProtocolViolation
	}

	c, _ := start()
	err := c.cs.HandleCrypto(LevelInitial, append(c.inbox[LevelInitial], tlsMessageBytes(2, []byte{1, 2, 3})...))
	for err == nil {
		var ev Event
		if ev, err = c.cs.NextEvent(); ev.Kind == EventNone {
			break
		}
	}
	if !isViolation(err) {
		t.Errorf("ServerHello with more Initial data after it: %v, want PROTOCOL_VIOLATION", err)
	}

	c, _ = start()
	if err := c.cs.HandleCrypto(LevelHandshake, c.inbox[LevelHandshake]); !isViolation(err) {
		t.Errorf("Handshake data before the ServerHello: %v, want PROTOCOL_VIOLATION", err)
	}
}

func tlsMessageBytes(typ byte, body []byte) []byte {
	return append([]byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}
