package agent

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/plumbing/testenv"
)

// One subscription callback carries every step message to a node: a
// step whose srun does not read its output must not hold up another
// step's messages behind it, and fails instead.
func TestStalledSrunDoesNotHoldUpOtherSteps(t *testing.T) {
	env := testenv.Start(t)
	a := testAgent(t, env)
	if err := a.subscribeSteps(t.Context()); err != nil {
		t.Fatal(err)
	}
	relay := func() *stepRelay {
		r := newStepRelay(2 * (len("unread") + stepMessageBytes)) // room for two lines
		r.nodes["n2"] = stepNode{Node: "n2", Tasks: 1}
		return r
	}
	stalled, other := relay(), relay()
	a.exec.mu.Lock()
	a.exec.relays = map[stepKey]*stepRelay{{"batch", 1, 0}: stalled, {"batch", 1, 1}: other}
	a.exec.mu.Unlock()
	publish := func(step int, line string) {
		t.Helper()
		o := domain.StepOutput{JobID: "batch", Attempt: 1, Step: step, Kind: domain.StepStdout, Line: line}
		if err := env.Bus.NC.Publish(subjects.StepTo(subjects.StepOutput, "n2", "n1"), mustJSON(o)); err != nil {
			t.Fatal(err)
		}
	}
	// Nobody reads step 0: its first two lines fill its relay, the third
	// overflows it.
	for range 3 {
		publish(0, "unread")
	}
	publish(1, "other step")
	select {
	case <-other.ready:
		if got := other.take(); len(got) != 1 || got[0].Line != "other step" {
			t.Errorf("other step got %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("another step's output waited behind a srun that does not read")
	}
	// The callback handled step 0's messages before step 1's.
	select {
	case <-stalled.lost:
	default:
		t.Error("the stalled step's overflow did not fail it")
	}
}

// srunTest runs srun against this node's agent (n1) for batch job
// "batch", whose script runs here and whose other node is n2: by default
// a step has tasks 0 and 1 on n1, 2 and 3 on n2. Nothing runs the tasks:
// the test plays the nodes, relaying their messages itself.
type srunTest struct {
	a        *agent
	sock     string
	launches chan domain.StepLaunch // the launches n2 gets
	kills    chan domain.StepKill   // the kills n2 gets
}

type srunResult struct {
	code int
	err  error
}

func newSrunTest(t *testing.T) *srunTest {
	t.Helper()
	env := testenv.Start(t)
	a := testAgent(t, env)
	g := &localGang{as: domain.Assignment{JobID: "batch", Attempt: 1, Node: "n1", NodeRank: 0, NNodes: 2, WorldSize: 4,
		Nodes: []string{"n1", "n2"}, Command: []string{"job.sh"}, Ranks: []domain.Rank{{Rank: 0}, {Rank: 1}},
		Batch: &jobspec.Batch{Script: "#!/bin/sh\n"}}, token: "tok", done: make(chan struct{})}
	a.exec.mu.Lock()
	a.exec.gangs["batch"] = g
	a.exec.mu.Unlock()
	t.Cleanup(func() { // before the executor's own cleanup: the gang runs nothing to stop
		a.exec.mu.Lock()
		delete(a.exec.gangs, "batch")
		a.exec.mu.Unlock()
	})
	l, sock, err := listenAcks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	go a.serveAcks(t.Context(), l)
	st := &srunTest{a: a, sock: sock, launches: make(chan domain.StepLaunch, 10), kills: make(chan domain.StepKill, 10)}
	for subject, f := range map[string]func(*nats.Msg){
		subjects.StepTo(subjects.StepLaunch, "n1", "n2"): func(m *nats.Msg) {
			if l, err := domain.DecodeStepLaunch(m.Data); err == nil {
				st.launches <- l
			}
		},
		subjects.StepTo(subjects.StepKill, "n1", "n2"): func(m *nats.Msg) {
			if k, err := domain.DecodeStepKill(m.Data); err == nil {
				st.kills <- k
			}
		},
	} {
		sub, err := env.Bus.NC.Subscribe(subject, f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := env.Bus.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	return st
}

// srun starts srun, calling onEvent for each output line, and returns
// its step's number once the step is launched.
func (st *srunTest) srun(t *testing.T, onEvent func(SrunEvent)) (int, <-chan srunResult) {
	t.Helper()
	res := make(chan srunResult, 1)
	signals := make(chan string)
	t.Cleanup(func() { close(signals) })
	go func() {
		code, err := Srun(t.Context(), st.sock, "tok", SrunRequest{JobID: "batch", Attempt: 1, Argv: []string{"true"}}, signals, onEvent)
		res <- srunResult{code, err}
	}()
	select {
	case l := <-st.launches:
		return l.Step, res
	case r := <-res:
		t.Fatalf("srun ended before launching its step: %d, %v", r.code, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("srun launched no step")
	}
	return 0, nil
}

// relay hands the agent a message of the step as node from sent it.
func (st *srunTest) relay(from string, step, task int, kind, line string, code int) {
	st.a.exec.relayOutput(from, domain.StepOutput{JobID: "batch", Attempt: 1, Step: step, Task: task, Kind: kind, Line: line, Code: code})
}

// A srun whose own output is not read loses its step's output once the
// relay overflows (16 MiB behind): the step's tasks are killed at once (srun may never
// read again, and the agent is stuck writing to it), and srun, when it
// reads again, is told why it failed.
func TestSrunWhoseOutputIsNotReadFailsItsStep(t *testing.T) {
	st := newSrunTest(t)
	release := make(chan struct{})
	step, res := st.srun(t, func(SrunEvent) { <-release })
	st.a.exec.mu.Lock()
	r := st.a.exec.relays[stepKey{"batch", 1, step}]
	st.a.exec.mu.Unlock()
	line := strings.Repeat("x", 1024)
	// Fill the socket to srun until the agent is stuck writing to it: the
	// relay no longer drains.
	for i, draining := 0, true; draining; i++ {
		if i == 100_000 {
			t.Fatal("the relay drains into a srun that reads nothing")
		}
		st.relay("n2", step, 2, domain.StepStdout, line, 0)
		draining = false
		for range 20 {
			if r.waiting() == 0 {
				draining = true
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// Then overflow the relay (in the background: it must not block, but
	// if it does the test fails below rather than hangs).
	go func() {
		for range stepRelayBytes/len(line) + 1 {
			st.relay("n2", step, 2, domain.StepStdout, line, 0)
		}
	}()
	select {
	case k := <-st.kills:
		if k.Step != step || k.Signal != "" {
			t.Errorf("kill %+v, want step %d ended", k, step)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the step was not killed when srun stopped reading its output")
	}
	close(release)
	select {
	case r := <-res:
		if r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), "output was lost") {
			t.Errorf("srun ended %d, %v; want 1 and the output lost", r.code, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("srun did not end")
	}
}

// srun ends once every task of its step ended: each task's exit counts
// once, and only from the node that runs the task.
func TestSrunCountsEachTaskExitOnceFromItsNode(t *testing.T) {
	st := newSrunTest(t)
	type exit struct {
		node       string
		task, code int
	}
	for _, tc := range []struct {
		name string
		// first are four exits (as many as the step has tasks) that end
		// only some of them; rest end the others.
		first, rest []exit
	}{
		{"exits of another node's tasks",
			[]exit{{"n2", 0, 9}, {"n2", 1, 9}, {"n2", 2, 0}, {"n2", 3, 0}},
			[]exit{{"n1", 0, 0}, {"n1", 1, 0}}},
		{"a task's exit repeated",
			[]exit{{"n1", 0, 0}, {"n1", 0, 0}, {"n1", 0, 0}, {"n1", 1, 0}},
			[]exit{{"n2", 2, 0}, {"n2", 3, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := make(chan SrunEvent, 10)
			step, res := st.srun(t, func(ev SrunEvent) { events <- ev })
			for _, e := range tc.first {
				st.relay(e.node, step, e.task, domain.StepExit, "", e.code)
			}
			// The relay keeps order: srun gets this line before any end of
			// the step that the exits above could have caused.
			st.relay("n2", step, 2, domain.StepStdout, "still running", 0)
			select {
			case ev := <-events:
				if ev.Line != "still running" {
					t.Errorf("srun got %+v, want the still running line", ev)
				}
			case r := <-res:
				t.Fatalf("srun ended (%d, %v) while tasks of its step still run", r.code, r.err)
			case <-time.After(10 * time.Second):
				t.Fatal("srun got no output")
			}
			for _, e := range tc.rest {
				st.relay(e.node, step, e.task, domain.StepExit, "", e.code)
			}
			select {
			case r := <-res:
				// n2's exits of n1's tasks, had they counted, would make it 9.
				if r.code != 0 || r.err != nil {
					t.Errorf("srun ended %d, %v; want 0, the code of every task", r.code, r.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("srun did not end once every task ended")
			}
		})
	}
}

// A burst of output far past what srun writes at once (every rank at
// NCCL_DEBUG=INFO) waits for a srun that reads slowly: all of it arrives,
// in order, and the step ends as its tasks do.
func TestSlowSrunGetsABurstWhole(t *testing.T) {
	st := newSrunTest(t)
	var lines []string
	step, res := st.srun(t, func(ev SrunEvent) {
		if ev.Line != "" {
			lines = append(lines, ev.Line)
			if len(lines)%1000 == 0 {
				time.Sleep(50 * time.Millisecond) // a slow terminal
			}
		}
	})
	const burst = 5000
	for i := range burst {
		st.relay("n2", step, 2, domain.StepStdout, strconv.Itoa(i), 0)
	}
	for _, e := range []struct {
		node string
		task int
	}{{"n1", 0}, {"n1", 1}, {"n2", 2}, {"n2", 3}} {
		st.relay(e.node, step, e.task, domain.StepExit, "", 0)
	}
	select {
	case r := <-res:
		if r.code != 0 || r.err != nil {
			t.Fatalf("srun ended %d, %v; want 0", r.code, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("srun did not end")
	}
	if len(lines) != burst || lines[0] != "0" || lines[burst-1] != strconv.Itoa(burst-1) {
		t.Errorf("srun got %d lines (first %q), want all %d in order", len(lines), lines[:min(1, len(lines))], burst)
	}
}

// A job's sruns at once are bounded; one that ends makes room.
func TestGangStepsBoundTheirSruns(t *testing.T) {
	var s gangSteps
	for i := range 3 {
		if !s.enterSrun(3) {
			t.Fatalf("srun %d of 3 refused", i+1)
		}
	}
	if s.enterSrun(3) {
		t.Error("a fourth srun served past the bound of 3")
	}
	s.leaveSrun()
	if !s.enterSrun(3) {
		t.Error("no room after one ended")
	}
}

// waiting is how many messages wait in the queue.
func (r *stepRelay) waiting() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue)
}
