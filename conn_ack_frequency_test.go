package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// ackFreqBulk sends size bytes from the client to the server over
// testLink (100 Mbit/s, 10 ms each way: a window of about 170 packets of
// 1,452 bytes) and returns the pair and the simulated time it took.
func ackFreqBulk(t *testing.T, clientCfg, serverCfg *Config, size int) (*simPair, time.Duration, *frameLog) {
	t.Helper()
	p := newSimPair(t, testLink, clientCfg, 3301)
	if serverCfg != nil {
		p.server.serverCfg = serverCfg.withDefaults()
	}
	p.connect(t)
	log := watchFrames(p.server.c)
	start := p.sim.Now()
	simTransfer(t, p, 1, size, 60*time.Second, nil)
	return p, p.sim.Now().Sub(start), log
}

// draft-ietf-quic-ack-frequency, Section 3: "Endpoints advertise their
// support for receiving ACK_FREQUENCY and IMMEDIATE_ACK frames ... by
// sending the following transport parameter ... min_ack_delay", in
// microseconds and not above max_ack_delay; Config.DisableAckFrequency
// sends none.
func TestSimAckFrequencyTransportParameter(t *testing.T) {
	p := newSimPair(t, testLink, nil, 3300)
	p.connect(t)
	for _, c := range []*connState{p.client.c, p.server.c} {
		pp := c.peerParams
		if !pp.HasMinAckDelay || pp.MinAckDelay != time.Millisecond || pp.MinAckDelay > pp.MaxAckDelay {
			t.Errorf("%v received min_ack_delay %v (sent %v), max_ack_delay %v", c.role, pp.MinAckDelay, pp.HasMinAckDelay, pp.MaxAckDelay)
		}
	}
	p = newSimPair(t, testLink, &Config{DisableAckFrequency: true}, 3300)
	p.connect(t)
	if p.client.c.peerParams.HasMinAckDelay || p.server.c.peerParams.HasMinAckDelay {
		t.Error("min_ack_delay sent with DisableAckFrequency")
	}
}

// A bulk transfer to a peer that takes ACK_FREQUENCY frames: once the
// congestion window holds many packets, the sender asks for an ACK every
// few packets ("A data sender signals the conditions under which it wants
// to receive ACK frames using an ACK_FREQUENCY frame",
// draft-ietf-quic-ack-frequency, Section 4), the receiver follows, and
// far fewer ACK packets cross the path than with RFC 9000's every second
// packet, while the transfer takes no longer and its data arrives whole.
// With either side's DisableAckFrequency, no frame is sent and the
// receiver acknowledges every second packet.
func TestSimAckFrequencyFewerAcks(t *testing.T) {
	const size = 16 << 20
	on, tOn, logOn := ackFreqBulk(t, nil, nil, size)
	off, tOff, logOff := ackFreqBulk(t, &Config{DisableAckFrequency: true}, nil, size)
	peerOff, _, logPeerOff := ackFreqBulk(t, nil, &Config{DisableAckFrequency: true}, size)

	acksOn, acksOff := on.server.c.stats().AcksSent, off.server.c.stats().AcksSent
	pkts := on.server.c.stats().PacketsReceived
	t.Logf("ACK packets for %d MiB: %d with ACK_FREQUENCY (%d frames), %d without (%d data packets); %v vs %v",
		size>>20, acksOn, logOn.counts[wire.FrameTypeAckFrequency], acksOff, pkts, tOn, tOff)
	if n := logOn.counts[wire.FrameTypeAckFrequency]; n == 0 {
		t.Fatal("the client sent no ACK_FREQUENCY frame")
	}
	if _, ok := on.server.c.spaces[ackhandler.SpaceApplication].recv.AckFrequencySequence(); !ok {
		t.Fatal("the server applied no ACK_FREQUENCY frame")
	}
	if acksOn*3 > acksOff {
		t.Errorf("%d ACK packets with ACK_FREQUENCY, %d without: want at most a third", acksOn, acksOff)
	}
	if got := on.client.c.stats().AcksReceived; got == 0 || got > acksOn {
		t.Errorf("client counted %d ACK frames received, server %d sent", got, acksOn)
	}
	// Simulated time: deterministic.
	if tOn > tOff+tOff/20 {
		t.Errorf("transfer took %v with ACK_FREQUENCY, %v without", tOn, tOff)
	}
	if n := logOff.counts[wire.FrameTypeAckFrequency] + logPeerOff.counts[wire.FrameTypeAckFrequency] +
		logOff.counts[wire.FrameTypeImmediateAck] + logPeerOff.counts[wire.FrameTypeImmediateAck]; n != 0 {
		t.Errorf("%d ACK frequency frames sent with DisableAckFrequency on one side", n)
	}
	if acks := peerOff.server.c.stats().AcksSent; acks*3 <= acksOff*2 {
		t.Errorf("%d ACK packets from a server without the extension, %d with neither side", acks, acksOff)
	}
}

// "When an ACK_FREQUENCY frame is lost, the sender is encouraged to send
// another ACK_FREQUENCY frame ... A sending endpoint MUST send
// monotonically increasing values in the Sequence Number field"
// (draft-ietf-quic-ack-frequency, Section 4): the datagram with the
// client's first frame is dropped, and the frame sent again has the next
// sequence number, which the server applies.
func TestSimAckFrequencyLostFrameSentAgain(t *testing.T) {
	p := newSimPair(t, testLink, nil, 3302)
	p.connect(t)
	log := watchFrames(p.server.c)
	dropped := false
	p.client.dropOut = func(_ time.Time, _ []byte) bool {
		if !dropped && p.client.c.ackFreq.nextSeq == 1 {
			dropped = true
			return true
		}
		return false
	}
	simTransfer(t, p, 1, 8<<20, 60*time.Second, nil)
	if !dropped {
		t.Fatal("no ACK_FREQUENCY frame was sent")
	}
	seq, ok := p.server.c.spaces[ackhandler.SpaceApplication].recv.AckFrequencySequence()
	if !ok || seq == 0 {
		t.Fatalf("server applied sequence %d (any: %v), want a frame after the lost 0", seq, ok)
	}
	if log.counts[wire.FrameTypeAckFrequency] == 0 {
		t.Fatal("no ACK_FREQUENCY frame arrived")
	}
}

// "When sending PTO packets, one can include an IMMEDIATE_ACK frame to
// elicit an immediate acknowledgment" (draft-ietf-quic-ack-frequency,
// Section 7): while the server receives nothing, the client's probes
// carry IMMEDIATE_ACK, and the server answers the first that arrives.
func TestSimAckFrequencyImmediateAckInProbes(t *testing.T) {
	p := newSimPair(t, testLink, nil, 3303)
	p.connect(t)
	log := watchFrames(p.server.c)
	until := p.sim.Now().Add(700 * time.Millisecond)
	p.server.dropIn = func(now time.Time, _ *netsim.Datagram) bool { return now.Before(until) }
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil {
		t.Fatal(err)
	}
	w := newPatternWriter(s, 0, 1000)
	p.run(t, 3*time.Second, func() bool {
		w.step()
		return p.sim.Now().After(until) && log.counts[wire.FrameTypeImmediateAck] > 0 && p.client.c.sent.BytesInFlight() == 0
	})
	if log.counts[wire.FrameTypeImmediateAck] == 0 {
		t.Fatal("no IMMEDIATE_ACK arrived in the client's probes")
	}
	if n := p.client.c.sent.BytesInFlight(); n != 0 {
		t.Fatalf("%d bytes still in flight", n)
	}
}

// onAckFrequencyLost sends a frame again only for the newest sequence
// number: "unless an ACK_FREQUENCY frame with a larger Sequence Number
// value has already been sent" (draft-ietf-quic-ack-frequency, Section 4).
func TestAckFrequencyLossOfOlderFrame(t *testing.T) {
	p := newSimPair(t, testLink, nil, 3304)
	p.connect(t)
	c := p.client.c
	c.ackFreq = ackFreqSender{nextSeq: 3, threshold: 7, inFlight: true}
	c.onAckFrequencyLost(1)
	if c.ackFreq.toSend || !c.ackFreq.inFlight {
		t.Fatalf("loss of an older frame: %+v", c.ackFreq)
	}
	c.onAckFrequencyAcked(1)
	if !c.ackFreq.inFlight {
		t.Fatalf("ack of an older frame: %+v", c.ackFreq)
	}
	c.onAckFrequencyLost(2)
	if !c.ackFreq.toSend || c.ackFreq.inFlight {
		t.Fatalf("loss of the newest frame: %+v", c.ackFreq)
	}
	b := c.appendAckFrequencyFrame(nil, 100)
	f, n, err := wire.ParseAckFrequencyFrame(b)
	if err != nil || n != len(b) || f.SequenceNumber != 3 || f.AckElicitingThreshold != 7 || f.ReorderingThreshold != 3 {
		t.Fatalf("sent again as %+v (%d of %d bytes, %v)", f, n, len(b), err)
	}
	if d := time.Duration(f.RequestedMaxAckDelay) * time.Microsecond; d < time.Millisecond || d > c.peerParams.MaxAckDelay {
		t.Fatalf("requested max ack delay %v", d)
	}
}

// On a path whose RTT is not well above the peer's timer granularity the
// sender keeps RFC 9000's ACK rate: "It is possible that the RTT is
// smaller than the receiver's timer granularity ... preventing the
// receiver from sending an acknowledgment every RTT in time unless
// packets are acknowledged immediately" (draft-ietf-quic-ack-frequency,
// Section 8.1). A 1 Gbit/s path of 1 ms RTT: no ACK_FREQUENCY frame.
func TestSimAckFrequencyNotOnShortRTT(t *testing.T) {
	link := netsim.LinkConfig{Bandwidth: 1_000_000_000, Delay: 500 * time.Microsecond, QueuePackets: 1000}
	p := newSimPair(t, link, nil, 3305)
	p.connect(t)
	log := watchFrames(p.server.c)
	simTransfer(t, p, 1, 16<<20, 60*time.Second, nil)
	if cw := p.client.c.cc.CongestionWindow() / p.client.c.maxDatagramSize; cw < 64 {
		t.Fatalf("congestion window of %d packets: too small for the check", cw)
	}
	if n := log.counts[wire.FrameTypeAckFrequency]; n != 0 {
		t.Fatalf("%d ACK_FREQUENCY frames on a path of %v smoothed RTT", n, p.client.c.rtt.Smoothed())
	}
}
