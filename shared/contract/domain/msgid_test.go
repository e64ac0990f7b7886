package domain

import "testing"

// A retried message keeps its ID; a message that means something else
// gets another.
func TestMsgIDs(t *testing.T) {
	r := Report{JobID: "j", Attempt: 2, Node: "n1", Kind: ReportStarted}
	if got, want := r.MsgID(), "report.j.2.n1.started"; got != want {
		t.Errorf("report MsgID = %q, want %q", got, want)
	}
	retried := r
	retried.Reason = "second try"
	if retried.MsgID() != r.MsgID() {
		t.Error("a retried report changed its ID")
	}
	ids := map[string]bool{}
	for _, id := range []string{
		r.MsgID(),
		Report{JobID: "j", Attempt: 2, Node: "n1", Kind: ReportExited}.MsgID(),
		Report{JobID: "j", Attempt: 3, Node: "n1", Kind: ReportStarted}.MsgID(),
		Report{JobID: "j", Attempt: 2, Node: "n2", Kind: ReportStarted}.MsgID(),
		ProposalMsgID("j", 2, 0), ProposalMsgID("j", 2, 1), ProposalMsgID("j", 3, 0),
		PreemptMsgID("j", 2, "big"), PreemptMsgID("j", 3, "big"), PreemptMsgID("j", 2, "other"),
	} {
		if ids[id] {
			t.Errorf("ID %q built for two different messages", id)
		}
		ids[id] = true
	}
}
