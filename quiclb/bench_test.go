package quiclb

import "testing"

var benchConfigs = []struct {
	name string
	c    Config
}{
	{"plaintext", Config{ServerIDLen: 2, NonceLen: 6}},
	{"single-pass", Config{ServerIDLen: 8, NonceLen: 8, Key: testKey}},
	{"four-pass-odd", Config{ServerIDLen: 3, NonceLen: 4, Key: testKey}},
	{"four-pass-sid-longer", Config{ServerIDLen: 10, NonceLen: 5, Key: testKey}},
}

// BenchmarkGenerate measures GenerateConnectionID per mode.
func BenchmarkGenerate(b *testing.B) {
	for _, bc := range benchConfigs {
		b.Run(bc.name, func(b *testing.B) {
			g, _ := NewGenerator(bc.c, make([]byte, bc.c.ServerIDLen))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					g.GenerateConnectionID()
				}
			})
		})
	}
}

// BenchmarkServerID measures a load balancer's decoding per mode.
func BenchmarkServerID(b *testing.B) {
	for _, bc := range benchConfigs {
		b.Run(bc.name, func(b *testing.B) {
			g, _ := NewGenerator(bc.c, make([]byte, bc.c.ServerIDLen))
			d, _ := NewDecoder(bc.c)
			cid, _ := g.GenerateConnectionID()
			buf := make([]byte, 0, 20)
			b.ReportAllocs()
			for b.Loop() {
				d.ServerID(buf[:0], cid.Bytes())
			}
		})
	}
}
