package qlog_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// checkOpensInDraftAndQvis checks that the .sqlog file at path is what
// both draft-ietf-quic-qlog-main-schema (the text in shared/specs, after
// -13) and qvis accept. The qvis rules are those of its source at commit
// 72c8c4bba0e438885392f8150a0966e0211e28da (2025-10-08), the one `make
// qvis-check` runs under node:
//   - FileLoader.GuesstimateFileTypeFromExtension: ".sqlog" is JSON-SEQ;
//     for ".qlog" and ".json" names, GuesstimateFileTypeFromHeader looks
//     for "qlog_version", "qlog_format" and "JSON-SEQ" in the first 1024
//     characters;
//   - TextSequenceJSONToQlog.convert: records split on the record
//     separator, each JSON.parse'd; the first is the header, which needs
//     qlog_version, qlog_format == "JSON-SEQ" and trace, else "File did
//     not start with the proper qlog header" and the file is refused;
//   - QlogLoader.fromJSON: qlog_version must be one of draft-02,
//     draft-02-RC1, qlog-03-WIP or 0.3 (QlogSchema02 versionAliases),
//     else "Unknown qlog version";
//   - QlogLoaderV2.fromDraft02 and DirectEventParser: events are objects
//     whose "time" parses as a number, in order, and whose "name" is
//     "category:type"; a missing qlog_format raises a non-compliance
//     alert.
func checkOpensInDraftAndQvis(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// qvis
	first := string(b[:min(len(b), 1024)])
	for _, s := range []string{"qlog_version", "qlog_format", "JSON-SEQ"} {
		if !strings.Contains(first, s) {
			t.Errorf("%s: qvis sniffs %q in the first 1024 characters; not there", path, s)
		}
	}
	var recs []map[string]any
	for _, r := range strings.Split(string(b), "\x1e") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatalf("%s: a record is not JSON: %v", path, err)
		}
		recs = append(recs, m)
	}
	if len(recs) < 2 {
		t.Fatalf("%s: %d records", path, len(recs))
	}
	h := recs[0]
	v, _ := h["qlog_version"].(string)
	if !slices.Contains([]string{"draft-02", "draft-02-RC1", "qlog-03-WIP", "0.3"}, v) {
		t.Errorf("%s: qlog_version %q is not one qvis loads", path, h["qlog_version"])
	}
	if h["qlog_format"] != "JSON-SEQ" {
		t.Errorf("%s: qlog_format %v, qvis wants JSON-SEQ", path, h["qlog_format"])
	}
	trace, ok := h["trace"].(map[string]any)
	if !ok {
		t.Fatalf("%s: no trace in the header", path)
	}
	last := -1.0
	for _, e := range recs[1:] {
		tm, err := strconv.ParseFloat(string(mustJSON(e["time"])), 64)
		if err != nil || tm < last {
			t.Fatalf("%s: event time %v (after %v)", path, e["time"], last)
		}
		last = tm
		if name, _ := e["name"].(string); !strings.Contains(name, ":") {
			t.Fatalf("%s: event name %q is not category:type", path, e["name"])
		}
	}
	// The draft: LogFile, QlogFileSeq, TraceSeq, CommonFields and
	// ReferenceTime (Sections 3, 5, 7 and 8).
	if h["file_schema"] != "urn:ietf:params:qlog:file:sequential" || h["serialization_format"] != "application/qlog+json-seq" {
		t.Errorf("%s: file_schema %v, serialization_format %v", path, h["file_schema"], h["serialization_format"])
	}
	if i := bytes.Index(b, []byte(`"serialization_format"`)); i < 0 || i > 256 {
		t.Errorf("%s: file_schema and serialization_format SHOULD be in the first 256 bytes", path)
	}
	if s, _ := trace["event_schemas"].([]any); len(s) == 0 {
		t.Errorf("%s: TraceSeq needs event_schemas: [+text]", path)
	}
	cf, _ := trace["common_fields"].(map[string]any)
	if tf := cf["time_format"]; tf != nil && tf != "relative_to_epoch" && tf != "relative_to_previous_event" {
		t.Errorf("%s: time_format %v", path, tf)
	}
	if rt, ok := cf["reference_time"].(map[string]any); ok {
		if _, ok := rt["clock_type"].(string); !ok {
			t.Errorf("%s: reference_time without clock_type", path)
		}
		if _, ok := rt["epoch"].(string); !ok {
			t.Errorf("%s: reference_time without epoch", path)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
