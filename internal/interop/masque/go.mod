module github.com/quicstack/quic/internal/interop/masque

go 1.26.0

replace (
	github.com/quic-go/masque-go => ./masque-go
	github.com/quicstack/quic => ../../..
)

require (
	github.com/quic-go/masque-go v0.0.0-00010101000000-000000000000
	github.com/quic-go/quic-go v0.61.0
	github.com/quicstack/quic v0.0.0-00010101000000-000000000000
	github.com/yosida95/uritemplate/v3 v3.0.2
)

require (
	github.com/dunglas/httpsfv v1.1.0 // indirect
	github.com/quic-go/qpack v0.6.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
