package domain

import "strconv"

// De-duplication IDs (Nats-Msg-Id) of the work messages. Each is a
// function of what the message means, never of when it was sent, so a
// sender that retries or restarts publishes the same ID and JetStream
// drops the copy. They live beside the message types so that every sender
// (the agent, the load test's virtual agents, placement) builds them alike.

// MsgID is the report's: one per job attempt, node and kind.
func (r Report) MsgID() string {
	return "report." + r.JobID + "." + strconv.Itoa(r.Attempt) + "." + r.Node + "." + string(r.Kind)
}

// ProposalMsgID is a proposal's: one per job attempt and placement round
// (round counts the conflicts the attempt has met, so a proposal after a
// conflict is new while a re-sent one is not).
func ProposalMsgID(jobID string, attempt, round int) string {
	return "propose." + jobID + "." + strconv.Itoa(attempt) + "." + strconv.Itoa(round)
}

// PreemptMsgID is the drain request preempting attempt of victim for
// preemptor: one per victim attempt and preemptor.
func PreemptMsgID(victim string, attempt int, preemptor string) string {
	return "preempt." + victim + "." + strconv.Itoa(attempt) + "." + preemptor
}
