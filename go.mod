module github.com/quicstack/quic

go 1.26
