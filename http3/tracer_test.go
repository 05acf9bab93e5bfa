package http3

import "testing"

func TestFrameAndSettingNames(t *testing.T) {
	for typ, want := range map[uint64]string{
		frameData: "data", frameHeaders: "headers", frameCancelPush: "cancel_push", frameSettings: "settings",
		framePushPromise: "push_promise", frameGoaway: "goaway", frameMaxPushID: "max_push_id",
		0x2: "reserved", 0x21: "reserved", 0x21 + 0x1f*7: "reserved", 0x22: "unknown", 0xf0700: "unknown",
	} {
		if got := FrameTypeName(typ); got != want {
			t.Errorf("FrameTypeName(%#x) = %q, want %q", typ, got, want)
		}
	}
	for id, want := range map[uint64]string{
		settingQPACKMaxTableCapacity: "settings_qpack_max_table_capacity", settingMaxFieldSectionSize: "settings_max_field_section_size",
		settingQPACKBlockedStreams: "settings_qpack_blocked_streams", settingEnableConnectProtocol: "settings_enable_connect_protocol",
		settingH3Datagram: "settings_h3_datagram", 0x21 + 0x1f: "reserved", 0x99: "unknown",
	} {
		if got := SettingName(id); got != want {
			t.Errorf("SettingName(%#x) = %q, want %q", id, got, want)
		}
	}
	s := settings{QPACKMaxTableCapacity: 10, EnableConnectProtocol: true, Other: [][2]uint64{{0x99, 3}}}
	l := s.list()
	if len(l) != 3 || l[0] != (Setting{settingQPACKMaxTableCapacity, 10}) || l[1] != (Setting{settingEnableConnectProtocol, 1}) || l[2] != (Setting{0x99, 3}) {
		t.Errorf("settings list %v", l)
	}
}
