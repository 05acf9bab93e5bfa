module github.com/quic-go/masque-go

go 1.25.0

require (
	github.com/dunglas/httpsfv v1.1.0
	github.com/quic-go/quic-go v0.61.0
	github.com/yosida95/uritemplate/v3 v3.0.2
)
