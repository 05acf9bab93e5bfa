// Package keylog opens the NSS key log file of the example programs, in
// which crypto/tls writes the TLS secrets (tls.Config.KeyLogWriter) that
// let Wireshark and tshark decrypt QUIC packets.
package keylog

import (
	"io"
	"os"
)

// Open opens path for appending key log lines, or, when path is empty,
// the file named by the SSLKEYLOGFILE environment variable. It returns
// nil and no error when neither is set.
func Open(path string) (io.WriteCloser, error) {
	if path == "" {
		path = os.Getenv("SSLKEYLOGFILE")
	}
	if path == "" {
		return nil, nil
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}
