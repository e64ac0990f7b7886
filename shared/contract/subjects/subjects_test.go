package subjects

import "testing"

// A per-node subject names its node, and nothing else does: the node is
// what gang and drain check a report or ack against.
func TestNodeOf(t *testing.T) {
	for subject, want := range map[string]string{
		ReportFrom("node-1"):        "node-1",
		CheckpointAckFrom("node-1"): "",
		Report:                      "",
		Report + ".a.b":             "",
		Report + "x.node-1":         "",
	} {
		if got := NodeOf(Report, subject); got != want {
			t.Errorf("NodeOf(Report, %q) = %q, want %q", subject, got, want)
		}
	}
	if got := NodeOf(CheckpointAck, CheckpointAckFrom("n2")); got != "n2" {
		t.Errorf("ack subject's node = %q", got)
	}
}

// Span names stay low-cardinality: per-node subjects keep their family's.
func TestTemplateOfPerNodeSubjects(t *testing.T) {
	if got := Template(ReportFrom("node-7")); got != Report {
		t.Errorf("Template(report) = %q", got)
	}
	if got := Template(CheckpointAckFrom("node-7")); got != CheckpointAck {
		t.Errorf("Template(ack) = %q", got)
	}
}
