package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/errs"
	"github.com/lockstep-dev/lockstep/shared/contract/internal/fuzzseed"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
)

var at = time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)

// goodEvents are events as the services publish them.
func goodEvents() map[string]Event {
	rank, code := 3, 137
	job := domain.Job{ID: "train-1", Attempt: 2, Restarts: 1}
	job.Spec.Queue = "research"
	reserved := ForJob(Reserved, job, at)
	reserved.Placement = &domain.Placement{MasterAddr: "10.0.0.1", MasterPort: 29500, Nodes: []domain.NodePlacement{
		{Node: "n1", GPUs: []int{0, 1}, Ranks: []domain.Rank{{Rank: 0, GPUs: []int{0, 1}}}}}}
	failed := ForJob(Failed, job, at)
	failed.Reason, failed.Node, failed.Rank, failed.ExitCode = "rank 3 exited 137", "n1", &rank, &code
	rejected := ForJob(Rejected, domain.Job{ID: "job-17"}, at)
	rejected.Reason, rejected.MsgID = "invalid job spec: gang.nodes: must be an integer", "Not An ID"
	draining := ForJob(Draining, job, at)
	draining.Reason, draining.Signal = "preempted", "SIGUSR1"
	draining.Drain = &domain.Drain{Kind: domain.DrainPreempt, Then: domain.ThenRequeue, Reason: "preempted", RequestedAt: at, Deadline: at.Add(time.Minute),
		Actor: SystemActor("placement")}
	draining.Actor = SystemActor("placement")
	owned := job
	owned.Owner = "alice"
	cancelled := ForJob(Cancelled, owned, at)
	cancelled.Reason, cancelled.Actor = "cancelled by user", "alice"
	refused := ForJob(Refused, owned, at)
	refused.Reason, refused.Actor = "job train-1 belongs to alice", "bob"
	return map[string]Event{
		"cancelled": cancelled, "refused": refused,
		"admitted": ForJob(Admitted, job, at), "reserved": reserved, "failed": failed, "rejected": rejected, "draining": draining,
		"node-up":       {Type: NodeUp, Node: "n1", Epoch: 5, Time: at},
		"gpu-unhealthy": {Type: GPUUnhealthy, Node: "n1", GPUs: []int{3}, Reason: "gpu 3 (GPU-x): 2 uncorrectable ECC errors", Time: at},
		"gpu-healthy":   {Type: GPUHealthy, Node: "n1", GPUs: []int{3}, Time: at},
	}
}

func TestDecodeAcceptsPublishedEvents(t *testing.T) {
	for name, ev := range goodEvents() {
		data, _ := json.Marshal(ev)
		got, err := DecodeFrom(ev.Subject(), data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if again, _ := json.Marshal(got); string(again) != string(data) {
			t.Errorf("%s changed in decoding:\n got  %s\n want %s", name, again, data)
		}
	}
}

// badEvents are forged or malformed events and what the error must say.
var badEvents = []struct{ name, data, want string }{
	{"malformed", `{"type":`, "malformed JSON"},
	{"unknown-type", `{"type":"exploded","jobId":"a","time":"2026-12-03T06:00:00Z"}`, "type"},
	{"no-time", `{"type":"admitted","jobId":"a"}`, "time"},
	{"zero-time", `{"type":"admitted","jobId":"a","time":"0001-01-01T00:00:00Z","attempt":1}`, "time: required"},
	{"escape-in-id", `{"type":"admitted","jobId":"a\u001b[2J","time":"2026-12-03T06:00:00Z","attempt":1}`, "jobId: not a job ID"},
	{"escape-in-node", `{"type":"node-up","node":"n1\r\u001b[31m","time":"2026-12-03T06:00:00Z","attempt":0}`, "node: not a node name"},
	{"float-attempt", `{"type":"admitted","jobId":"a","time":"2026-12-03T06:00:00Z","attempt":1.0}`, "attempt: must be int"},
	{"bad-placement", `{"type":"running","jobId":"a","time":"2026-12-03T06:00:00Z","attempt":1,"placement":{"nodes":[],"masterAddr":"x","masterPort":1}}`, "placement.nodes"},
	{"refused-no-reason", `{"type":"refused","jobId":"a","actor":"bob","time":"2026-12-03T06:00:00Z","attempt":1}`, "reason"},
	{"actor-posing", `{"type":"cancelled","jobId":"a","reason":"x","actor":"lockstep:x.y","time":"2026-12-03T06:00:00Z","attempt":1}`, "actor"},
	{"bad-owner", `{"type":"admitted","jobId":"a","owner":"Alice Smith","time":"2026-12-03T06:00:00Z","attempt":1}`, "owner"},
	{"gpu-unhealthy-no-reason", `{"type":"gpu-unhealthy","node":"n1","gpus":[3],"time":"2026-12-03T06:00:00Z","attempt":0}`, "reason"},
	{"gpu-out-of-range", `{"type":"gpu-unhealthy","node":"n1","gpus":[4096],"reason":"x","time":"2026-12-03T06:00:00Z","attempt":0}`, "gpus.0"},
	{"bad-queue", `{"type":"admitted","jobId":"a","queue":"../x","time":"2026-12-03T06:00:00Z","attempt":1}`, "queue"},
}

func TestDecodeRefusesForgedEvents(t *testing.T) {
	for _, tc := range badEvents {
		_, err := Decode([]byte(tc.data))
		var me *domain.MessageError
		switch {
		case err == nil:
			t.Errorf("%s: accepted", tc.name)
		case !errors.As(err, &me) || !errs.IsPermanent(err):
			t.Errorf("%s: %v is not a permanent *MessageError", tc.name, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %q does not say %q", tc.name, err, tc.want)
		}
	}
	// A well-formed event on another job's subject is forged.
	ev := goodEvents()["admitted"]
	data, _ := json.Marshal(ev)
	if _, err := DecodeFrom("lockstep.v1.events.job.other.admitted", data); err == nil || !strings.Contains(err.Error(), "subject") {
		t.Errorf("event read on another job's subject: %v", err)
	}
	// So is one on another owner's: the subject is what readers are
	// allowed by, the body must agree with it.
	ev.Owner = "alice"
	data, _ = json.Marshal(ev)
	if _, err := DecodeFrom(subjects.JobEvent("bob", ev.JobID, string(ev.Type)), data); err == nil || !strings.Contains(err.Error(), "subject") {
		t.Errorf("alice's event on bob's subject: %v", err)
	}
	if _, err := DecodeFrom(subjects.JobEvent("alice", ev.JobID, string(ev.Type)), data); err != nil {
		t.Errorf("alice's event on her subject: %v", err)
	}
}

// TestSeedCorpus keeps testdata/fuzz/FuzzDecode in step with goodEvents
// and badEvents: LOCKSTEP_UPDATE_CORPUS=1 rewrites it.
func TestSeedCorpus(t *testing.T) {
	seeds := map[string][]byte{}
	for name, ev := range goodEvents() {
		data, _ := json.Marshal(ev)
		seeds["good-"+name] = data
	}
	for _, b := range badEvents {
		seeds["bad-"+b.name] = []byte(b.data)
	}
	fuzzseed.Sync(t, "FuzzDecode", seeds)
}

// The counts accounting multiplies are checked by Decode's own rules, not
// only by the schema the client build does without.
func TestEventChecksRefuseNegativeCounts(t *testing.T) {
	rank := -1
	ev := Event{Type: Succeeded, JobID: "j", Time: time.Now(), Nodes: -2, GPUsPerNode: -8, Attempt: -1, Restarts: -1, Rank: &rank}
	got := map[string]bool{}
	for _, fe := range ev.check() {
		got[fe.Field] = true
	}
	for _, f := range []string{"nodes", "gpusPerNode", "attempt", "restarts", "rank"} {
		if !got[f] {
			t.Errorf("check() does not refuse a negative %s: %v", f, ev.check())
		}
	}
	ev = Event{Type: Succeeded, JobID: "j", Time: time.Now(), Nodes: 2, GPUsPerNode: 8}
	if fes := ev.check(); fes != nil {
		t.Errorf("a sound event refused: %v", fes)
	}
}
