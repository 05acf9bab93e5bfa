package wire

// A Role says which end of a connection an endpoint is. Some transport
// parameters and frames may be sent only by one role.
type Role uint8

const (
	// RoleClient is the endpoint that initiates the connection.
	RoleClient Role = iota
	// RoleServer is the endpoint that accepts the connection.
	RoleServer
)

// String returns "client" or "server".
func (r Role) String() string {
	if r == RoleServer {
		return "server"
	}
	return "client"
}

// Peer returns the opposite role.
func (r Role) Peer() Role { return 1 - r }
