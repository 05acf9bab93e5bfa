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
// (reusePortIDGenerator), and the sockets [acceptBase,
// acceptBase+acceptN) are those of the processes taking new connections,
// so:
//
//   - a short header packet (RFC 9000, Section 17.3) goes to the socket
//     its Destination Connection ID names: the byte at offset cidLen, the
//     first byte being the header's flags;
//   - a Handshake packet (RFC 9000, Section 17.2.4; type 0b10 in
//     version 1, 0b11 in version 2, RFC 9369, Section 3.2) carries our
//     ID ("the Destination Connection ID field ... is the value of the
//     Source Connection ID field" the server sent, RFC 9000, Section
//     7.2): version at offset 1, length at 5, ID from 6. It goes to the
//     socket the ID's last byte names;
//   - an Initial or 0-RTT packet carries our ID once the client has
//     our first Initial, but until then one the client chose at random,
//     which may have our length and a last byte naming a socket that
//     takes no new connections (of the other generation: unread, or of
//     a process finishing its connections). It goes to the socket its
//     last byte names only if that socket takes new connections, which
//     is the case for every connection in its handshake except those of
//     a process that is handing over; those lose the client's Initial
//     acknowledgments, which its Handshake packets make up for;
//   - anything else, above all the Initial and 0-RTT packets of a new
//     connection, goes to one of the accepting sockets by a hash of the
//     first four bytes of the Destination Connection ID, which are the
//     same in every packet the client sends before it learns ours: "This
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
	const (
		short = iota + 1
		long
		v1
		v2
		handshake
		initial
		clientID
		hash
	)
	lastByte := uint32(6 + cidLen - 1)
	var p bpfProgram
	p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
	p.jumpIf(bpf.JumpBitsSet, 0x80, long, short)
	// Short header: the socket the ID's last byte names, if any.
	p.label(short)
	p.add(bpf.LoadAbsolute{Off: uint32(cidLen), Size: 1})
	p.jumpIf(bpf.JumpGreaterOrEqual, uint32(groupSize), -1, 0)
	p.add(bpf.RetA{})
	p.add(bpf.LoadAbsolute{Off: 1, Size: 4})
	p.jump(hash)
	// Long header: the packet type, as the version numbers it.
	p.label(long)
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0x30})
	p.add(bpf.TAX{})
	p.add(bpf.LoadAbsolute{Off: 1, Size: 4})
	p.jumpIf(bpf.JumpEqual, 0x6b3343cf, v2, v1)
	p.label(v1)
	p.add(bpf.TXA{})
	p.jumpIf(bpf.JumpEqual, 0x20, handshake, initial)
	p.label(v2)
	p.add(bpf.TXA{})
	p.jumpIf(bpf.JumpEqual, 0x30, handshake, initial)
	// Handshake: our ID, to the socket it names.
	p.label(handshake)
	p.add(bpf.LoadAbsolute{Off: 5, Size: 1})
	p.jumpIf(bpf.JumpEqual, uint32(cidLen), 0, clientID)
	p.add(bpf.LoadAbsolute{Off: lastByte, Size: 1})
	p.jumpIf(bpf.JumpGreaterOrEqual, uint32(groupSize), clientID, 0)
	p.add(bpf.RetA{})
	// Initial, 0-RTT, others: to the socket the ID names if it accepts.
	p.label(initial)
	p.add(bpf.LoadAbsolute{Off: 5, Size: 1})
	p.jumpIf(bpf.JumpEqual, uint32(cidLen), 0, clientID)
	p.add(bpf.LoadAbsolute{Off: lastByte, Size: 1})
	p.jumpIf(bpf.JumpGreaterOrEqual, uint32(acceptBase), 0, clientID)
	p.jumpIf(bpf.JumpGreaterOrEqual, uint32(acceptBase+acceptN), clientID, 0)
	p.add(bpf.RetA{})
	p.label(clientID)
	p.add(bpf.LoadAbsolute{Off: 6, Size: 4})
	// Hash into the accepting sockets.
	p.label(hash)
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(acceptN)})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: uint32(acceptBase)})
	p.add(bpf.RetA{})
	return p.assemble()
}

// bpfProgram assembles a classic BPF program with forward jumps to
// labels.
type bpfProgram struct {
	insts  []bpf.Instruction
	labels map[int]int // label -> index
	fixups []bpfFixup
}

// bpfFixup is a jump at index at to the labels yes and no (0: the next
// instruction; -1: the one after it).
type bpfFixup struct{ at, yes, no int }

func (p *bpfProgram) add(i bpf.Instruction) { p.insts = append(p.insts, i) }

func (p *bpfProgram) label(l int) {
	if p.labels == nil {
		p.labels = map[int]int{}
	}
	p.labels[l] = len(p.insts)
}

func (p *bpfProgram) jumpIf(cond bpf.JumpTest, val uint32, yes, no int) {
	p.fixups = append(p.fixups, bpfFixup{len(p.insts), yes, no})
	p.add(bpf.JumpIf{Cond: cond, Val: val})
}

func (p *bpfProgram) jump(to int) {
	p.fixups = append(p.fixups, bpfFixup{len(p.insts), to, to})
	p.add(bpf.Jump{})
}

func (p *bpfProgram) assemble() ([]bpf.RawInstruction, error) {
	skip := func(at, l int) (uint8, error) {
		switch l {
		case 0:
			return 0, nil
		case -1:
			return 1, nil
		}
		to, ok := p.labels[l]
		if !ok || to <= at || to-at-1 > 255 {
			return 0, errors.New("quic: bad jump in BPF program")
		}
		return uint8(to - at - 1), nil
	}
	for _, f := range p.fixups {
		yes, err := skip(f.at, f.yes)
		if err != nil {
			return nil, err
		}
		no, err := skip(f.at, f.no)
		if err != nil {
			return nil, err
		}
		switch i := p.insts[f.at].(type) {
		case bpf.JumpIf:
			i.SkipTrue, i.SkipFalse = yes, no
			p.insts[f.at] = i
		case bpf.Jump:
			i.Skip = uint32(yes)
			p.insts[f.at] = i
		}
	}
	return bpf.Assemble(p.insts)
}
