package http3

import (
	"compress/gzip"
	"io"
)

// gzipBody decompresses a response body the Transport asked to be gzipped
// (see Transport.DisableCompression). The gzip header is read on the
// first Read, so that RoundTrip does not wait for content.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error // sticky error from gzip.NewReader
}

// Read reads decompressed content.
func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

// Close closes the underlying body.
func (g *gzipBody) Close() error { return g.body.Close() }
