package qpack_test

import (
	"errors"
	"fmt"

	"github.com/quicstack/quic/http3/qpack"
)

// Example wires a client's Encoder to a server's Decoder the way an HTTP/3
// layer does: SETTINGS values in, encoder and decoder stream bytes across,
// field sections in HEADERS frames.
func Example() {
	// The server advertises SETTINGS_QPACK_MAX_TABLE_CAPACITY 4096 and
	// SETTINGS_QPACK_BLOCKED_STREAMS 16.
	dec := qpack.NewDecoder(qpack.DecoderConfig{MaxTableCapacity: 4096, MaxBlockedStreams: 16})
	enc := qpack.NewEncoder(qpack.EncoderConfig{})
	enc.SetPeerSettings(4096, 16)

	req := []qpack.HeaderField{
		{Name: ":method", Value: "GET"},
		{Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "example.org"},
		{Name: ":path", Value: "/"},
		{Name: "user-agent", Value: "quicstack"},
	}
	var fields []qpack.HeaderField
	for _, stream := range []uint64{0, 4} {
		headers := enc.EncodeFieldSection(nil, stream, req) // HEADERS frame payload
		encStream := enc.AppendEncoderStream(nil)           // write to the encoder stream

		// Suppose the HEADERS frame overtakes the encoder stream data.
		var err error
		fields, err = dec.DecodeFieldSection(stream, headers, fields[:0])
		if errors.Is(err, qpack.ErrBlocked) {
			fmt.Println("stream", stream, "blocked")
			if err := dec.HandleEncoderStream(encStream); err != nil {
				panic(err) // close the connection with the *qpack.Error's code
			}
			for _, s := range dec.AppendUnblocked(nil) {
				fields, err = dec.DecodeFieldSection(s, headers, fields[:0])
			}
		}
		if err != nil {
			panic(err)
		}
		fmt.Println("stream", stream, "decoded", len(fields), "fields from", len(headers), "bytes")
		// The decoder stream carries the acknowledgment back.
		if err := enc.HandleDecoderStream(dec.AppendDecoderStream(nil)); err != nil {
			panic(err)
		}
	}
	// Output:
	// stream 0 blocked
	// stream 0 decoded 5 fields from 7 bytes
	// stream 4 decoded 5 fields from 7 bytes
}
