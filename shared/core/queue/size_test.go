package queue_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	pt "github.com/lockstep-dev/lockstep/shared/core/place/placetest"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// gpuJob is a pending one-node job of g GPUs.
func gpuJob(id string, g int, limit, submitted time.Duration) queue.PendingJob {
	return queue.PendingJob{
		ID: id, Queue: "q", SubmittedAt: now.Add(submitted), TimeLimit: limit,
		Request: pt.MakeGang(1, g).ID(id).WaitSince(now.Add(submitted)).Obj(),
	}
}

func ids(jobs []queue.PendingJob) string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return strings.Join(out, ",")
}

// TestOrderSizeHandicap: with a day per GPU beyond the first (the
// default), at most a week (the default cap; no snapshot, so no GPUs to
// scale the small-job backlog by and no backlog cap), big (8 GPUs, 9 days
// ago) counts from 2 days ago; two (2 GPUs, 8.5 days ago) from 7.5 days
// ago; small-in (1 GPU, 3 days ago) goes ahead of big; small-out (1 GPU, 1
// day ago, more than a week after big) does not. Off (negative), the order
// is FIFO.
func TestOrderSizeHandicap(t *testing.T) {
	d := 24 * time.Hour
	in := queue.Input{Pending: []queue.PendingJob{
		gpuJob("small-out", 1, time.Hour, -d),
		gpuJob("big", 8, time.Hour, -9*d),
		gpuJob("small-in", 1, time.Hour, -3*d),
		gpuJob("two", 2, time.Hour, -8*d-12*time.Hour),
	}}
	if got, want := ids(queue.Order(in)), "two,small-in,big,small-out"; got != want {
		t.Errorf("default order %s, want %s (a day per GPU)", got, want)
	}
	in.Config.SizeHandicap = -1
	if got, want := ids(queue.Order(in)), "big,two,small-in,small-out"; got != want {
		t.Errorf("order without the handicap %s, want %s", got, want)
	}
	// A smaller cap: big counts from 9 days ago + 2 days = 7 days ago,
	// and now waits ahead of small-in too.
	in.Config = queue.Config{SizeHandicap: queue.Duration(time.Hour), MaxSizeHandicap: queue.Duration(2 * d)}
	if got, want := ids(queue.Order(in)), "big,two,small-in,small-out"; got != want {
		t.Errorf("order with 1h per GPU, at most 2 days: %s, want %s", got, want)
	}
	in.Config.MaxSizeHandicap = queue.Duration(8 * d)
	in.Config.SizeHandicap = queue.Duration(12 * time.Hour) // big: 3.5 days
	if got, want := ids(queue.Order(in)), "two,big,small-in,small-out"; got != want {
		t.Errorf("order with 12h per GPU: %s, want %s", got, want)
	}
}

// TestSizeHandicapScalesWithSmallBacklog: one 8-GPU node, busy. Two 1-GPU
// jobs of 24 h wait: 48 GPU-hours, a small-job backlog of 6 h on 8 GPUs,
// so by default (16 × the backlog) the handicap is at most 96 h = 4 days.
// big (8 GPUs, 5 days ago) counts from 1 day ago: small-a (2 days ago)
// goes ahead of it, small-b (12 h ago) does not. Without the backlog cap
// (negative) the week applies and both go ahead; with 4 × (24 h) neither.
func TestSizeHandicapScalesWithSmallBacklog(t *testing.T) {
	d := 24 * time.Hour
	running := []queue.RunningJob{hold("r1", 2*time.Hour, "n1")}
	in := queue.Input{Snapshot: cluster(1, running...), Running: running, Now: now, Pending: []queue.PendingJob{
		gpuJob("big", 8, time.Hour, -5*d),
		gpuJob("small-a", 1, d, -2*d),
		gpuJob("small-b", 1, d, -d/2),
	}}
	if got, want := in.SmallBacklog(), 6*time.Hour; got != want {
		t.Fatalf("small backlog %s, want %s", got, want)
	}
	for _, c := range []struct {
		k    float64
		want string
	}{{0, "small-a,big,small-b"}, {-1, "small-a,small-b,big"}, {4, "big,small-a,small-b"}} {
		in.Config.SizeHandicapBacklog = c.k
		if got := ids(queue.Order(in)); got != c.want {
			t.Errorf("sizeHandicapBacklog %v: order %s, want %s", c.k, got, c.want)
		}
	}
	// A caller that passes only part of the queue says how much small
	// work waits in all: 96 GPU-hours make a 12 h backlog, a cap of 8
	// days, above the week.
	in.Config.SizeHandicapBacklog = 0
	in.SmallWork = int64(96 * time.Hour / time.Second)
	if got, want := ids(queue.Order(in)), "small-a,small-b,big"; got != want {
		t.Errorf("with SmallWork: order %s, want %s", got, want)
	}
}

// TestPlanSmallFirst: two 8-GPU nodes, n1 busy until 15:00. A whole-node
// job submitted at 12:00 and a 1-GPU job submitted at 13:00 both fit n2.
// In FIFO order the whole-node job takes n2 and the 1-GPU job waits for
// 15:00; with a day per GPU the 1-GPU job, whose handicap is 7 days
// smaller, starts on n2 and the whole-node job holds the reservation of n1
// from 15:00.
func TestPlanSmallFirst(t *testing.T) {
	running := []queue.RunningJob{hold("r1", 2*time.Hour, "n1")}
	in := queue.Input{
		Snapshot: cluster(2, running...), Running: running, Now: now,
		Pending: []queue.PendingJob{gpuJob("whole", 8, 4*time.Hour, -2*time.Hour), gpuJob("tiny", 1, 4*time.Hour, -time.Hour)},
		Config:  queue.Config{SizeHandicap: queue.Duration(queue.DefaultSizeHandicap)},
	}
	plan := queue.PlanBackfill(in)
	for _, d := range plan.Decisions {
		t.Logf("%s %s %q | %s", d.JobID, d.Action, d.Reason, d.Detail)
	}
	if d, _ := plan.Find("tiny"); d.Action != queue.Start || d.Placement.Nodes[0].Node != "n2" {
		t.Fatalf("tiny: %s %q, want a start on n2", d.Action, d.Reason)
	}
	if r := plan.Reservation; r == nil || r.JobID != "whole" || !r.Start.Equal(now.Add(time.Hour)) ||
		r.Placement.Nodes[0].Node != "n1" {
		t.Fatalf("reservation %+v, want whole on n1 from 15:00", r)
	}

	in.Config.SizeHandicap = -1
	plan = queue.PlanBackfill(in)
	if d, _ := plan.Find("whole"); d.Action != queue.Start {
		t.Fatalf("without the handicap, whole: %s %q, want a start", d.Action, d.Reason)
	}
	if d, _ := plan.Find("tiny"); d.ReasonCode != queue.ReasonReserved {
		t.Fatalf("without the handicap, tiny: %s %q, want Reserved", d.Action, d.Reason)
	}
}

// TestSizeHandicapBound is the starvation bound with the handicap on: one
// 8-GPU node, a whole-node job at 14:00 and, from 14:00, a 1-GPU job
// (1 h) every 5 minutes, more than the node can run. With 1 h per GPU
// (at most 2 h), 1-GPU jobs submitted before 16:00 go ahead of the
// whole-node job, and none submitted later: it starts once they have
// run, when the policy without the handicap starts it at once.
func TestSizeHandicapBound(t *testing.T) {
	run := func(cfg queue.Config) (*sim, map[string]time.Time) {
		s := &sim{
			t: t, snap: cluster(1), now: now, policy: queue.PlanBackfill, cfg: cfg,
			started: map[string]time.Time{}, reserved: map[string]bool{},
			pending: []queue.PendingJob{gpuJob("big", 8, time.Hour, 0)},
		}
		submitted := map[string]time.Time{"big": now}
		for m := range 12 * 60 {
			s.now = now.Add(time.Duration(m) * time.Minute)
			if m%5 == 0 {
				id := fmt.Sprintf("small-%04d", m)
				s.pending = append(s.pending, gpuJob(id, 1, time.Hour, time.Duration(m)*time.Minute))
				submitted[id] = s.now
			}
			s.step()
		}
		return s, submitted
	}

	s, _ := run(queue.Config{SizeHandicap: -1})
	if at := s.started["big"]; !at.Equal(now) {
		t.Fatalf("without the handicap big started at %s, want 14:00", at.Format("15:04"))
	}

	maxH := 2 * time.Hour
	s, submitted := run(queue.Config{SizeHandicap: queue.Duration(time.Hour), MaxSizeHandicap: queue.Duration(maxH)})
	at, ok := s.started["big"]
	if !ok {
		t.Fatal("with the handicap big never started")
	}
	ahead := 0
	for id, st := range s.started {
		if id == "big" || !st.Before(at) {
			continue
		}
		ahead++
		if !submitted[id].Before(now.Add(maxH)) {
			t.Errorf("%s, submitted at %s, started at %s, ahead of big (started %s): beyond the 2 h bound",
				id, submitted[id].Format("15:04"), st.Format("15:04"), at.Format("15:04"))
		}
	}
	if ahead < 24 {
		t.Errorf("only %d small jobs went ahead of big, want the 24 submitted before 16:00", ahead)
	}
	// The 24 jobs submitted before 16:00 need 3 node-hours of 8 GPUs:
	// big starts when the last of them ends, by 18:00.
	if limit := now.Add(4 * time.Hour); at.After(limit) {
		t.Errorf("big started at %s, want by %s", at.Format("15:04"), limit.Format("15:04"))
	}
	t.Logf("big: at 14:00 without the handicap, at %s with it (%d small jobs ahead)", at.Format("15:04"), ahead)
}

// TestConfigJSON: the handicap round-trips through the plan's JSON input
// as a duration string, so a dumped plan replays with the same order.
func TestConfigJSON(t *testing.T) {
	cfg := queue.Config{SizeHandicap: queue.Duration(90 * time.Minute), MaxSizeHandicap: queue.Duration(48 * time.Hour)}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"sizeHandicap":"1h30m0s","maxSizeHandicap":"48h0m0s"}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back queue.Config
	if err := json.Unmarshal(b, &back); err != nil || back.SizeHandicap != cfg.SizeHandicap || back.MaxSizeHandicap != cfg.MaxSizeHandicap {
		t.Errorf("round trip: %+v %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"sizeHandicap": 5}`), &back); err == nil {
		t.Error("a number of nanoseconds was accepted")
	}
	if err := (queue.Config{MaxSizeHandicap: -1}).Validate(); err == nil {
		t.Error("a negative maxSizeHandicap validated")
	}
}
