package http3

// peerSettingsKnown returns the peer's SETTINGS and true once they
// arrived.
func (c *connection) peerSettingsKnown() (settings, bool) {
	select {
	case <-c.peerSettingsDone:
		return c.peerSettings, true
	default:
		return settings{}, false
	}
}

// peerMaxFieldSectionSize is the peer's SETTINGS_MAX_FIELD_SECTION_SIZE;
// 0 means no limit, which is also the value before its SETTINGS arrive
// (RFC 9114, Section 7.2.4.1: the default is unlimited).
func (c *connection) peerMaxFieldSectionSize() uint64 {
	s, _ := c.peerSettingsKnown()
	return s.MaxFieldSectionSize
}
