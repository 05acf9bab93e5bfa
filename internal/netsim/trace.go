package netsim

import "time"

// A TraceKind says what happened to a datagram.
type TraceKind uint8

// The trace kinds.
const (
	TraceSend           TraceKind = iota // an endpoint sent it onto a link
	TraceDeliver                         // it reached an endpoint
	TraceDropQueue                       // the link's queue was full
	TraceDropLoss                        // random loss on the link
	TraceDropMTU                         // larger than the link's MTU
	TraceDropUnroutable                  // no route between the hosts
	TraceDropNoEndpoint                  // no endpoint at the destination address
)

var traceKindNames = [...]string{"send", "deliver", "drop-queue", "drop-loss", "drop-mtu", "drop-unroutable", "drop-no-endpoint"}

// String returns a short name such as "send" or "drop-loss".
func (k TraceKind) String() string {
	if int(k) < len(traceKindNames) {
		return traceKindNames[k]
	}
	return "unknown"
}

// A TraceEvent reports one thing that happened to a datagram; see
// Network.Trace.
type TraceEvent struct {
	Time time.Time
	Kind TraceKind
	// Link is the link involved; nil only for TraceDropUnroutable.
	Link *Link
	// Datagram is valid only during the call: it is recycled afterwards.
	// On TraceSend it shows the datagram as sent; on TraceDeliver as
	// received (ECN possibly CE, payload possibly corrupted).
	Datagram *Datagram
}
