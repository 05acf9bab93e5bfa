package qpack

import (
	"errors"
	"testing"
)

func TestErrorType(t *testing.T) {
	err := decompressionFailed("x")
	var qe *Error
	if !errors.As(err, &qe) || qe.Code != 0x0200 {
		t.Fatalf("errors.As gave %v", qe)
	}
	if !errors.Is(err, ErrDecompressionFailed) || errors.Is(err, ErrEncoderStream) {
		t.Error("errors.Is does not match the code")
	}
	if uint64(ErrEncoderStream) != 0x0201 || uint64(ErrDecoderStream) != 0x0202 {
		t.Error("error code values differ from RFC 9204, Section 8.3")
	}
	if got := err.Error(); got != "qpack: QPACK_DECOMPRESSION_FAILED: x" {
		t.Errorf("Error() = %q", got)
	}
	if ErrorCode(0x99).String() != "0x99" {
		t.Error("unknown code string")
	}
}
