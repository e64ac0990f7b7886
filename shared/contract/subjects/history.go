package subjects

// StreamHistory is the accounting history: a copy of the job events that
// say where a job is in its life (admitted through its end), sourced by
// the server from StreamEvents and kept far longer than the events and
// the job records (`lockstep history`, `lockstep usage`). No service
// writes it: its subjects are the events' own.
const StreamHistory = "LOCKSTEP_HISTORY"

// historyTypes are the job event types the history keeps: the lifecycle,
// not the chatter (draining, checkpointed, conflict, refused).
var historyTypes = []string{
	"admitted", "rejected", "reserved", "running", "requeued",
	"succeeded", "failed", "cancelled", "timeout",
}

// HistoryEvents are the subjects StreamHistory sources from
// StreamEvents: one filter per event type it keeps, for every owner and
// job.
func HistoryEvents() []string {
	out := make([]string, len(historyTypes))
	for i, t := range historyTypes {
		out[i] = prefix + ".events.job.*.*." + t
	}
	return out
}
