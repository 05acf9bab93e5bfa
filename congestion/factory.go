package congestion

// New returns the controller f makes for c, or NewCubic's when f is nil,
// after filling c's zero fields with their defaults: MaxDatagramSize 1200
// and a fresh RTTStats when RTT is nil (InitialWindowPackets 0 already
// means the InitialWindow of RFC 9002, Section 7.2). A factory that
// returns nil also gets NewCubic's controller.
func New(f ControllerFactory, c ControllerConfig) Controller {
	c = renoFillDefaults(c)
	if f != nil {
		if ctl := f(c); ctl != nil {
			return ctl
		}
	}
	return NewCubic(c)
}
