package domain

import "fmt"

// DecodeDrainRecord decodes and checks a drain in progress (drains/JOB):
// the drain service completes it and agents signal ranks from it, and
// anyone who may write etcd could have put it there.
func DecodeDrainRecord(data []byte) (DrainRecord, error) {
	return decode("drain record", data, func(c *checker, r *DrainRecord) {
		c.jobID("jobId", r.JobID)
		c.attempt("attempt", r.Attempt)
		c.drainKind("drain.kind", r.Drain.Kind)
		c.drainThen("drain.then", r.Drain.Then)
		// A drain upgraded to a cancel carries both reasons ("…; then …").
		c.text("drain.reason", r.Drain.Reason, 2*MaxReasonBytes+len("; then "))
		c.text("drain.actor", r.Drain.Actor, 256)
		c.text("signal", r.Signal, 32)
		expected := c.indices("expected", r.Expected, MaxNodes*maxRanksPerNode)
		for _, rank := range sortedKeys(r.Acks) {
			field := fmt.Sprintf("acks.%d", rank)
			if !expected[rank] {
				c.fail(field, "rank %d is not one the drain expects", rank)
			}
			c.checkpointRef(field, r.Acks[rank])
		}
		c.text("traceParent", r.TraceParent, 256)
	})
}
