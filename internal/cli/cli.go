// Package cli holds what the example programs share: exit statuses,
// usage errors, and the flags that configure QUIC (-cc, -qlog, -keylog).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/keylog"
	"github.com/quicstack/quic/qlog"
)

// UsageError is a mistake on the command line: exit status 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ExitCode reports err on stderr, prefixed by the program's name, and
// returns the exit status: 0 for success and -h, 2 for a usage error, 1
// for anything else.
func ExitCode(prog string, err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(*UsageError)):
		fmt.Fprintf(stderr, "%s: %v (see -h)\n", prog, err)
		return 2
	default:
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
}

// Parse parses args, turning flag errors into UsageErrors; -h gives
// flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{err}
	}
	return nil
}

// Congestion returns the controller factory named by a -cc flag; "" is
// the library's default, BBR (quic.Config.Congestion).
func Congestion(name string) (congestion.ControllerFactory, error) {
	switch strings.ToLower(name) {
	case "cubic":
		return congestion.NewCubic, nil
	case "", "bbr":
		return congestion.NewBBR, nil
	case "reno", "newreno":
		return congestion.NewNewReno, nil
	}
	return nil, Usagef("-cc %q: want cubic, bbr or reno", name)
}

// Tracer returns the Config.Tracer hook for a -qlog flag: qlog files in
// dir, or in $QLOGDIR when dir is empty, or nil.
func Tracer(dir string) qlog.TracerHook {
	if dir != "" {
		return qlog.DirTracer(dir)
	}
	return qlog.FromEnv()
}

// QlogDir names where the qlog files go, for messages: dir, $QLOGDIR,
// or "".
func QlogDir(dir string) string {
	if dir != "" {
		return dir
	}
	return qlogEnv()
}

// KeyLog opens the key log of a -keylog flag (or $SSLKEYLOGFILE); nil
// when neither is set.
func KeyLog(path string) (io.WriteCloser, error) { return keylog.Open(path) }

// Config returns a quic.Config with the congestion controller, the qlog
// hook and the other settings shared by the programs.
func Config(cc congestion.ControllerFactory, qlogDir string) *quic.Config {
	return &quic.Config{Congestion: cc, Tracer: Tracer(qlogDir)}
}
