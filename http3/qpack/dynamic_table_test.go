package qpack

import (
	"fmt"
	"testing"
)

func TestDynamicTableInsertEvict(t *testing.T) {
	var tbl dynamicTable
	tbl.setCapacity(200)
	// Each entry is len(name) + len(value) + 32 bytes.
	for i := 0; i < 10; i++ {
		abs := tbl.insert("n", fmt.Sprintf("v%02d", i)) // 36 bytes
		if abs != uint64(i) {
			t.Fatalf("absolute index %d, want %d", abs, i)
		}
		if tbl.size > tbl.capacity {
			t.Fatalf("size %d over capacity", tbl.size)
		}
	}
	// 200/36 = 5 entries fit: 5..9.
	if tbl.dropped != 5 || tbl.numEntries() != 5 || tbl.insertCount() != 10 || tbl.size != 180 {
		t.Errorf("dropped %d, entries %d, inserts %d, size %d", tbl.dropped, tbl.numEntries(), tbl.insertCount(), tbl.size)
	}
	if tbl.entry(4) != nil || tbl.entry(10) != nil || tbl.entry(5).value != "v05" || tbl.entry(9).value != "v09" {
		t.Error("entry lookup by absolute index is wrong")
	}
	// "This mechanism can be used to completely clear entries from the
	// dynamic table by setting a capacity of 0, which can subsequently be
	// restored." (RFC 9204, Section 3.2.2)
	tbl.setCapacity(0)
	if tbl.numEntries() != 0 || tbl.size != 0 || tbl.insertCount() != 10 {
		t.Errorf("after clearing: entries %d, size %d, inserts %d", tbl.numEntries(), tbl.size, tbl.insertCount())
	}
	tbl.setCapacity(100)
	if abs := tbl.insert("n", "again"); abs != 10 || tbl.entry(10).value != "again" {
		t.Errorf("insert after restoring: %d", abs)
	}
	// An entry of exactly the capacity evicts everything else.
	if abs := tbl.insert("", string(make([]byte, 68))); abs != 11 || tbl.numEntries() != 1 || tbl.size != 100 {
		t.Errorf("full-size entry: abs %d, entries %d, size %d", abs, tbl.numEntries(), tbl.size)
	}
}

func TestDynamicTableNoAllocsWhenWarm(t *testing.T) {
	var tbl dynamicTable
	tbl.setCapacity(4096)
	name, value := "content-type", "application/json"
	for i := 0; i < 1000; i++ {
		tbl.insert(name, value)
	}
	n := testing.AllocsPerRun(1000, func() { tbl.insert(name, value) })
	if n != 0 {
		t.Errorf("insert into a warm table: %v allocs", n)
	}
}

func TestEncoderTableBookkeeping(t *testing.T) {
	var tbl encoderTable
	tbl.setCapacity(1000)
	for i := 0; i < 4; i++ {
		tbl.insert("n", fmt.Sprint(i))
	}
	// Stream 0 has two sections (say, an interim and a final response).
	tbl.addSection(0, 2, 1)
	tbl.addSection(0, 4, 3)
	tbl.addSection(4, 3, 2)
	tbl.addSection(8, 1, 0)
	if got := tbl.blockedStreams(); got != 3 {
		t.Errorf("blocked streams %d, want 3 (stream 0 counts once)", got)
	}
	if !tbl.streamBlocking(0) || tbl.streamBlocking(12) {
		t.Error("streamBlocking is wrong")
	}
	// Acknowledging stream 0 acknowledges its earliest section.
	if !tbl.ackSection(0) || tbl.knownReceived != 2 || tbl.entry(1).refs != 0 || tbl.entry(3).refs != 1 {
		t.Errorf("after first ack: KRC %d", tbl.knownReceived)
	}
	// Stream 8 (RIC 1) is now below the Known Received Count.
	if got := tbl.blockedStreams(); got != 2 {
		t.Errorf("blocked streams %d, want 2", got)
	}
	tbl.cancelStream(0)
	if tbl.entry(3).refs != 0 || tbl.numSections != 2 {
		t.Error("cancellation did not release stream 0")
	}
	if tbl.ackSection(0) {
		t.Error("acknowledged a section that was cancelled")
	}
	// Entry 0 is referenced by stream 8: not evictable.
	tbl.setKnownReceived(4)
	if tbl.canFit(1000-34, ^uint64(0)) {
		t.Error("a referenced entry would be evicted")
	}
	tbl.ackSection(8)
	tbl.ackSection(4)
	if !tbl.canFit(1000, ^uint64(0)) || tbl.canFit(1001, ^uint64(0)) {
		t.Error("canFit with nothing referenced")
	}
}

func TestDrainingIndex(t *testing.T) {
	var tbl encoderTable
	tbl.setCapacity(400)
	for i := 0; i < 10; i++ {
		tbl.insert("n", fmt.Sprintf("%06d", i)) // 39 bytes
	}
	// Ten entries (390 bytes) fit. Entries drain once the newer ones fill
	// 300 bytes: 8 newer entries fill 312, so entries 0 and 1 drain.
	if got := tbl.drainingIndex(); got != 2 {
		t.Errorf("draining index %d, want 2", got)
	}
	var empty encoderTable
	empty.setCapacity(400)
	if got := empty.drainingIndex(); got != 0 {
		t.Errorf("empty table: draining index %d", got)
	}
}
