package main

import "testing"

func TestBudget(t *testing.T) {
	b := budget{max: 100}
	if !b.take(60) || b.take(50) || !b.take(40) || b.take(1) {
		t.Fatal("take: wrong answers around the maximum")
	}
	b.give(60)
	if !b.take(60) {
		t.Fatal("give did not return the bytes")
	}
}
