package wire

import "testing"

func TestStreamID(t *testing.T) {
	// RFC 9000, Section 2.1, Table 1.
	for _, tc := range []struct {
		id        StreamID
		initiator Role
		bidi      bool
	}{
		{0, RoleClient, true}, {1, RoleServer, true}, {2, RoleClient, false}, {3, RoleServer, false},
	} {
		if tc.id.Initiator() != tc.initiator || tc.id.IsBidi() != tc.bidi {
			t.Errorf("stream %d: initiator %v bidi %v", tc.id, tc.id.Initiator(), tc.id.IsBidi())
		}
		if tc.id.Num() != 1 || NthStreamID(tc.initiator, tc.bidi, 1) != tc.id {
			t.Errorf("stream %d is not the first of its kind", tc.id)
		}
	}
	if id := NthStreamID(RoleServer, false, 5); id != 19 || id.Num() != 5 {
		t.Errorf("5th server uni stream = %d (num %d)", id, id.Num())
	}
}
