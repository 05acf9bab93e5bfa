package cli

import (
	"flag"
	"io"

	"github.com/quicstack/quic"
)

// The help texts of the common flags, the same in every program.
const (
	CCUsage     = "congestion controller: bbr (the library's default), cubic or reno"
	QlogUsage   = "write a qlog file per connection to `dir` (default $QLOGDIR)"
	KeylogUsage = "append TLS secrets to `file` in NSS key log format, for Wireshark (default $SSLKEYLOGFILE)"
)

// Common are the flags that every program making QUIC connections
// (client, server, perf, bench, demo, proxy) accepts the same way: the
// same names, values, defaults and help texts.
//
//	-cc NAME      congestion controller: bbr (default), cubic or reno
//	-qlog DIR     a qlog file per connection in DIR (default $QLOGDIR)
//	-keylog FILE  TLS secrets for Wireshark (default $SSLKEYLOGFILE)
type Common struct {
	CC, Qlog, Keylog string
}

// AddCommon defines the common flags on fs.
func AddCommon(fs *flag.FlagSet) *Common {
	c := &Common{}
	fs.StringVar(&c.CC, "cc", "bbr", CCUsage)
	fs.StringVar(&c.Qlog, "qlog", "", QlogUsage)
	fs.StringVar(&c.Keylog, "keylog", "", KeylogUsage)
	return c
}

// Setup checks the flags and returns the quic.Config they ask for (the
// congestion controller and the qlog hook) and the key log to set as
// tls.Config.KeyLogWriter, nil when none was asked for; the caller closes
// it. A bad -cc is a UsageError.
func (c *Common) Setup() (*quic.Config, io.WriteCloser, error) {
	cc, err := Congestion(c.CC)
	if err != nil {
		return nil, nil, err
	}
	kl, err := KeyLog(c.Keylog)
	if err != nil {
		return nil, nil, err
	}
	return Config(cc, c.Qlog), kl, nil
}

// QlogDir names where the qlog files go, for messages: -qlog, $QLOGDIR,
// or "".
func (c *Common) QlogDir() string { return QlogDir(c.Qlog) }
