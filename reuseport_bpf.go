package quic

import (
	"errors"

	"golang.org/x/net/bpf"
)

// reusePortProgram returns the classic BPF program that picks, for each
// datagram arriving at a group of sockets bound with SO_REUSEPORT, the
// index of the socket that gets it (SO_ATTACH_REUSEPORT_CBPF; the program
// sees the UDP payload, and an index at or beyond the group's size makes
// the kernel pick by hash instead).
//
// The group's connection IDs are cidLen bytes whose last byte is the
// index of one of the sockets of the process that issued it
// (reusePortIDGenerator), so:
//
//   - a short header packet (RFC 9000, Section 17.3) goes to the socket
//     its Destination Connection ID names: the byte at offset cidLen, the
//     first byte being the header's flags;
//   - a long header packet whose Destination Connection ID is cidLen
//     bytes long (RFC 9000, Section 17.2: version at offset 1, length at
//     5, ID from 6) goes to the socket its last byte names: a client's
//     Handshake packets, and Initial packets after the server's first
//     Initial or a Retry;
//   - anything else, above all the Initial and 0-RTT packets of a new
//     connection, whose Destination Connection ID the client chose at
//     random, goes to one of the sockets [acceptBase, acceptBase+acceptN)
//     by a hash of the first four bytes of that ID, which are the same
//     in every packet the client sends before it learns ours: "This
//     Destination Connection ID MUST be at least 8 bytes in length"
//     (RFC 9000, Section 7.2).
//
// A byte naming no socket of the group is hashed the same way. A packet
// too short for a load ends the program with 0, the first socket, whose
// process drops it as it would have anyway.
func reusePortProgram(cidLen, groupSize, acceptBase, acceptN int) ([]bpf.RawInstruction, error) {
	if cidLen < 1 || cidLen > 20 || groupSize < 1 || groupSize > 256 || acceptN < 1 || acceptBase+acceptN > groupSize {
		return nil, errors.New("quic: invalid reuseport group parameters")
	}
	prog := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: 0, Size: 1},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x80, SkipTrue: 5}, // long header: 7
		// Short header: the socket the ID's last byte names.
		/* 2 */ bpf.LoadAbsolute{Off: uint32(cidLen), Size: 1},
		/* 3 */ bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: uint32(groupSize), SkipTrue: 1}, // none: 5
		/* 4 */ bpf.RetA{},
		/* 5 */ bpf.LoadAbsolute{Off: 1, Size: 4},
		/* 6 */ bpf.Jump{Skip: 5}, // hash: 12
		// Long header: ours if the ID has our length.
		/* 7 */ bpf.LoadAbsolute{Off: 5, Size: 1},
		/* 8 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(cidLen), SkipFalse: 2}, // a client's: 11
		/* 9 */ bpf.LoadAbsolute{Off: uint32(6 + cidLen - 1), Size: 1},
		/* 10 */ bpf.JumpIf{Cond: bpf.JumpLessThan, Val: uint32(groupSize), SkipTrue: 3}, // ret A: 14
		/* 11 */ bpf.LoadAbsolute{Off: 6, Size: 4},
		// Hash into the accepting sockets.
		/* 12 */ bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(acceptN)},
		/* 13 */ bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: uint32(acceptBase)},
		/* 14 */ bpf.RetA{},
	}
	return bpf.Assemble(prog)
}
