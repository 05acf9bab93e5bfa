package quiclb

import (
	"net/netip"
	"strings"
	"testing"
)

// TestNFTablesRuleset checks the rules for a two-byte server ID and what
// the generator refuses.
func TestNFTablesRuleset(t *testing.T) {
	c := Config{ID: 1, ServerIDLen: 2, NonceLen: 6}
	backends := []Backend{
		{ServerID: []byte{0, 1}, Addr: netip.MustParseAddr("10.0.0.1")},
		{ServerID: []byte{0, 2}, Addr: netip.MustParseAddr("10.0.0.2")},
	}
	rs, err := NFTablesRuleset(c, 1, backends, NFTablesOptions{VIP: netip.MustParseAddrPort("192.0.2.1:443")})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ip daddr 192.0.2.1 udp dport 443 notrack jump to_backend",
		"ip saddr { 10.0.0.1, 10.0.0.2 } udp sport 443 notrack jump from_backend",
		"@th,64,1 0 @th,72,3 1 ip daddr set @th,80,16 map { 0x0001 : 10.0.0.1, 0x0002 : 10.0.0.2 } accept",
		"@th,64,1 1 @th,104,8 10 @th,112,3 1 ip daddr set @th,120,16 map",
		"ip daddr set jhash ip saddr . udp sport mod 2 map { 0 : 10.0.0.1, 1 : 10.0.0.2 }",
		"ip saddr set 192.0.2.1",
	} {
		if !strings.Contains(rs, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, rs)
		}
	}
	vip := NFTablesOptions{VIP: netip.MustParseAddrPort("192.0.2.1:443")}
	for name, f := range map[string]func() error{
		"key": func() error {
			_, err := NFTablesRuleset(Config{ServerIDLen: 2, NonceLen: 6, Key: testKey}, 0, backends, vip)
			return err
		},
		"no VIP": func() error { _, err := NFTablesRuleset(c, 0, backends, NFTablesOptions{}); return err },
		"empty":  func() error { _, err := NFTablesRuleset(c, 0, nil, vip); return err },
		"wrong sid": func() error {
			_, err := NFTablesRuleset(c, 0, []Backend{{ServerID: []byte{1}, Addr: backends[0].Addr}}, vip)
			return err
		},
		"duplicate": func() error { _, err := NFTablesRuleset(c, 0, []Backend{backends[0], backends[0]}, vip); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
