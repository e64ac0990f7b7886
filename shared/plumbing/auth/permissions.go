package auth

import (
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

// Rules are the subjects one identity may publish and subscribe to. The
// server enforces them: a publish outside Pub is refused with a
// permissions violation and never reaches a service.
type Rules struct {
	Pub []string
	Sub []string
	// Replies lets the identity answer requests it received (one reply
	// each), without a standing right to publish on inbox subjects.
	Replies bool
}

// JetStream API subjects, by what they let a client do. Reading a stream
// through a consumer needs CONSUMER.CREATE with the filter subject in it
// (NATS 2.10+), which is what lets a user's rule name the subjects they
// may read.
const (
	jsAPI          = "$JS.API.>"
	jsInfo         = "$JS.API.INFO"
	jsStreamInfo   = "$JS.API.STREAM.INFO.*"
	jsAck          = "$JS.ACK.>"
	jsFlowControl  = "$JS.FC.>"
	jsDirectGetKV  = "$JS.API.DIRECT.GET." + subjects.StreamKVJobs + ".>"
	jsConsumerInfo = "$JS.API.CONSUMER.INFO.*.*"
)

// readerRights is what a person's own consumers take on the readable
// streams: pull, delete, acknowledge (nothing to acknowledge with an
// ordered consumer, but a consumer's acks are its stream's business only).
func readerRights() []string {
	var out []string
	// Only on subjects.ReadableStreams: the services' durable consumers
	// are on the others (the request and work streams), and a person who
	// could pull from, acknowledge on or delete those could read other
	// users' submissions, lose them unanswered, or stop a service
	// consuming.
	for _, stream := range subjects.ReadableStreams() {
		out = append(out, "$JS.API.CONSUMER.MSG.NEXT."+stream+".*", "$JS.API.CONSUMER.DELETE."+stream+".*", "$JS.ACK."+stream+".>")
	}
	return out
}

// consumerOn is the right to create a consumer on stream filtered to
// subject (and to nothing wider).
func consumerOn(stream, subject string) string {
	return "$JS.API.CONSUMER.CREATE." + stream + ".*." + subject
}

// Permissions is the permission table: what each identity may publish and
// subscribe to. It is the single place that says who may do what on the
// bus; docs/operations.md prints it.
func Permissions(id Identity) Rules {
	inbox := id.InboxPrefix() + ".>"
	// What every person may do: ask the read-only admin questions, read the
	// cluster-wide streams' info, follow replies in their own inbox.
	person := Rules{
		Pub: []string{
			subjects.TestOnly, subjects.TopologyView, subjects.NodeList,
			jsInfo, jsStreamInfo, jsConsumerInfo, jsFlowControl,
			// Direct get only (the bucket allows it, and clients use it):
			// a message get's answer is an API response, which the server
			// sends onto whatever reply subject the request names, unmarked,
			// so a person could put it on another user's submit subject.
			// A direct get's answer carries Nats-Stream, which every
			// consumer of a work subject refuses (bus.Replayed).
			jsDirectGetKV,
			// Job records are readable by key already (direct get); a
			// consumer on them is what watching one (`submit --wait`) and
			// listing them (`queue`) take, as in squeue, which shows every
			// job. Events and logs, which carry what a job did and
			// printed, stay the owner's.
			consumerOn(subjects.StreamKVJobs, subjects.KVJobsAll),
		},
		Sub: []string{inbox},
	}
	person.Pub = append(person.Pub, readerRights()...)
	switch id.Role {
	case RoleAdmin:
		return Rules{Pub: []string{">"}, Sub: []string{">"}, Replies: true}
	case RoleOperator:
		// An operator acts on nodes and reads everything, and submits as
		// itself.
		r := person
		r.Pub = append(r.Pub,
			subjects.SubmitAs(id.Name), subjects.CancelAs(id.Name), subjects.DrainAs(id.Name),
			subjects.NodeDrain, subjects.NodeResume,
			consumerOn(subjects.StreamEvents, ">"), consumerOn(subjects.StreamLogs, ">"), consumerOn(subjects.StreamHistory, ">"))
		r.Sub = append(r.Sub, subjects.EventsAll, subjects.LogsAll)
		return r
	case RoleUser:
		// A user's requests go on subjects that carry their name: the owner
		// of a job is whoever the server let publish it. Events and logs
		// carry the owner too, so a user reads their own jobs' and nobody
		// else's, through a consumer or a plain subscription.
		r := person
		r.Pub = append(r.Pub, subjects.SubmitAs(id.Name), subjects.CancelAs(id.Name), subjects.DrainAs(id.Name),
			consumerOn(subjects.StreamEvents, subjects.UserJobEvents(id.Name)),
			consumerOn(subjects.StreamHistory, subjects.UserJobEvents(id.Name)),
			consumerOn(subjects.StreamLogs, subjects.UserLogs(id.Name)))
		r.Sub = append(r.Sub, subjects.UserJobEvents(id.Name), subjects.UserLogs(id.Name))
		return r
	case RoleNode:
		// A node reports on its own assignments and its ranks' output, and
		// forwards its ranks' checkpoint acks. It announces itself up and
		// its GPUs withdrawn or returned, and no other node event: a drain
		// or a node's loss is the services' to say. It writes no job record
		// and proposes nothing.
		return Rules{
			Pub: []string{
				subjects.ReportFrom(id.Name), subjects.NodeEvent(id.Name, "node-up"),
				subjects.NodeEvent(id.Name, "gpu-unhealthy"), subjects.NodeEvent(id.Name, "gpu-healthy"),
				subjects.LogsAll, subjects.CheckpointAckFrom(id.Name),
				// Batch job steps between the agents of a job: sent as
				// itself, received only if addressed to it.
				subjects.StepsFrom(id.Name),
				jsInfo, jsStreamInfo,
			},
			Sub: []string{inbox, subjects.StepsTo(id.Name)},
		}
	case RoleAdmission, RolePlacement, RoleGang, RoleDrain:
		// The services are the system of record: they consume the request
		// and work streams, write job records and publish events. Each
		// service shares the job records (every one moves jobs through
		// their states), but only placement proposes and asks for
		// preemption, and no service speaks for a node or a person.
		pub := []string{subjects.EventsAll, jsAPI, jsAck, jsFlowControl, subjects.KVJobsAll}
		if id.Role == RolePlacement {
			pub = append(pub, subjects.Reserve, subjects.Drain)
		}
		return Rules{
			Pub: pub,
			// Bounded redelivery follows the server's max-deliveries
			// advisories for the services' own consumers.
			Sub:     []string{subjects.All, inbox, subjects.MaxDeliveriesAdvisory("*", "*")},
			Replies: true,
		}
	}
	return Rules{}
}
