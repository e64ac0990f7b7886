package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/nats-io/nats.go"
	"golang.org/x/sys/unix"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
	"github.com/lockstep-dev/lockstep/shared/contract/subjects"
	"github.com/lockstep-dev/lockstep/shared/core/place"
	"github.com/lockstep-dev/lockstep/shared/plumbing/store"
)

// The receiving side of batch job steps: a node runs its tasks of a step
// only after checking the launch against what etcd says it runs — the
// job is a batch job assigned to this node in the launch's attempt, the
// sender is the job's first node, and every node of the step is one of
// the job's. What the tasks run as, where and with which GPUs comes from
// the assignment, never from the message.

// gangSteps are the step tasks of one gang attempt on this node.
type gangSteps struct {
	mu      sync.Mutex
	next    int            // the next step ID (the script's node numbers them)
	running map[int][]rank // by step
	ended   bool           // the gang ended: no step starts any more
	// killed are the steps the script's node has killed: a task of one
	// that starts after the kill arrived (srun -K's first failure can come
	// before the other nodes have started theirs) is ended at once.
	killed map[int]bool
	wg     sync.WaitGroup // one per task still running
	sruns  int            // served on this node now (the script's)
}

// enterSrun counts one more srun served, unless most are already.
func (s *gangSteps) enterSrun(most int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sruns >= most {
		return false
	}
	s.sruns++
	return true
}

// leaveSrun counts one srun fewer.
func (s *gangSteps) leaveSrun() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sruns--
}

// newStep numbers a step of the gang (on the script's node).
func (s *gangSteps) newStep() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	return id
}

// decodeStep decodes a step message from another node; a malformed one
// is logged and dropped (a step message is never retried).
func decodeStep[T any](a *agent, kind, from string, data []byte, decode func([]byte) (T, error)) (T, bool) {
	v, err := decode(data)
	if err != nil {
		a.Log.Warn("malformed step "+kind, "from", from, "err", err)
		return v, false
	}
	return v, true
}

// subscribeSteps receives step messages addressed to this node until ctx
// ends.
func (a *agent) subscribeSteps(ctx context.Context) error {
	sub, err := a.Bus.Serve(subjects.StepsTo(a.cfg.Node.Name), "", func(m *nats.Msg) {
		from := subjects.StepSender(m.Subject)
		kind, _, _ := strings.Cut(strings.TrimPrefix(m.Subject, subjects.Steps+"."), ".")
		switch subjects.Steps + "." + kind {
		case subjects.StepLaunch:
			if l, ok := decodeStep(a, "launch", from, m.Data, domain.DecodeStepLaunch); ok {
				go a.launchStep(ctx, from, l)
			}
		case subjects.StepKill:
			if k, ok := decodeStep(a, "kill", from, m.Data, domain.DecodeStepKill); ok {
				a.exec.killStep(from, k)
			}
		case subjects.StepOutput:
			if o, ok := decodeStep(a, "output", from, m.Data, domain.DecodeStepOutput); ok {
				a.exec.relayOutput(from, o)
			}
		}
	})
	if err != nil {
		return errors.Wrap(err, "subscribe to step messages")
	}
	go func() {
		<-ctx.Done()
		_ = sub.Unsubscribe()
	}()
	return nil
}

// launchStep checks a launch and runs this node's tasks, or refuses it.
func (a *agent) launchStep(ctx context.Context, from string, l domain.StepLaunch) {
	self := a.cfg.Node.Name
	idx := slices.Index(l.Nodes, self)
	g, err := a.exec.admitStep(from, l, idx)
	if err == nil {
		err = a.confirmAssigned(ctx, l)
	}
	if err != nil {
		a.Log.Warn("step launch refused", "job", l.JobID, "step", l.Step, "from", from, "err", err)
		first := 0
		if idx > 0 {
			for _, n := range l.Tasks[:idx] {
				first += n
			}
		}
		a.exec.sendOutput(from, domain.StepOutput{JobID: l.JobID, Attempt: l.Attempt, Step: l.Step, Task: first,
			Kind: domain.StepRefused, Error: self + ": " + err.Error()})
		return
	}
	a.exec.runStep(g, from, l, idx)
}

// admitStep checks a launch against the attempt running here.
func (e *executor) admitStep(from string, l domain.StepLaunch, idx int) (*localGang, error) {
	e.mu.Lock()
	g, ok := e.gangs[l.JobID]
	e.mu.Unlock()
	switch {
	case !ok || g.as.Attempt != l.Attempt:
		return nil, errors.Newf("job %s attempt %d does not run here", l.JobID, l.Attempt)
	case g.as.Batch == nil:
		return nil, errors.Newf("job %s is not a batch job: it has no steps", l.JobID)
	case len(g.as.Nodes) == 0 || from != g.as.Nodes[0]:
		return nil, errors.Newf("step launch from %s, not from the job's first node", from)
	case idx < 0:
		return nil, errors.Newf("the step does not name this node")
	}
	seen := map[string]bool{}
	for _, n := range l.Nodes {
		if seen[n] || !slices.Contains(g.as.Nodes, n) {
			return nil, errors.Newf("step node %s is not one of the job's or is named twice", n)
		}
		seen[n] = true
	}
	return g, nil
}

// confirmAssigned reads the node's assignment of the job from etcd: the
// memory of gangs could lag a release.
func (a *agent) confirmAssigned(ctx context.Context, l domain.StepLaunch) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := a.Etcd.Get(ctx, store.AssignKey(a.cfg.Node.Name, l.JobID))
	if err != nil {
		return errors.Wrap(err, "read the assignment")
	}
	if len(resp.Kvs) == 0 {
		return errors.Newf("job %s is not assigned to this node", l.JobID)
	}
	as, err := domain.DecodeAssignment(resp.Kvs[0].Value)
	if err != nil {
		return err
	}
	if as.Attempt != l.Attempt || as.Batch == nil {
		return errors.Newf("this node's assignment of job %s is attempt %d, batch %v", l.JobID, as.Attempt, as.Batch != nil)
	}
	return nil
}

// runStep starts this node's tasks of a step and reports their output and
// exits to the script's node.
func (e *executor) runStep(g *localGang, to string, l domain.StepLaunch, idx int) {
	k := l.Tasks[idx]
	first := 0
	for _, n := range l.Tasks[:idx] {
		first += n
	}
	total := 0
	for _, n := range l.Tasks {
		total += n
	}
	list, _ := slurmenv.CompressHostlist(l.Nodes)
	spec := maps.Clone(g.as.Env)
	if spec == nil {
		spec = map[string]string{}
	}
	maps.Copy(spec, l.Env)
	g.steps.mu.Lock()
	if g.steps.ended {
		g.steps.mu.Unlock()
		e.sendOutput(to, domain.StepOutput{JobID: l.JobID, Attempt: l.Attempt, Step: l.Step, Task: first, Kind: domain.StepRefused, Error: "the job is ending"})
		return
	}
	if g.steps.running == nil {
		g.steps.running = map[int][]rank{}
	}
	g.steps.wg.Add(k)
	g.steps.mu.Unlock()
	for t := range k {
		task := first + t
		share := taskShare(g.as.Ranks, t, k)
		env := rankEnvOf(g.setup, share)
		env.Spec = spec
		env.WorldSize, env.Rank, env.LocalRank, env.LocalWorldSize = total, task, t, k
		env.NodeRank, env.NNodes = idx, len(l.Nodes)
		env.Task = rankenv.SlurmTask{ProcID: task, LocalID: t, NodeID: g.as.NodeRank,
			Step: &rankenv.SlurmStep{ID: l.Step, NumTasks: total, NumNodes: len(l.Nodes), NodeList: list}}
		out := func(kind string) *stepLines {
			return &stepLines{send: func(line string) {
				e.sendOutput(to, domain.StepOutput{JobID: l.JobID, Attempt: l.Attempt, Step: l.Step, Task: task, Kind: kind, Line: line})
			}}
		}
		exit := func(code int, why string) {
			if why != "" {
				e.sendOutput(to, domain.StepOutput{JobID: l.JobID, Attempt: l.Attempt, Step: l.Step, Task: task, Kind: domain.StepStderr, Line: why})
			}
			e.sendOutput(to, domain.StepOutput{JobID: l.JobID, Attempt: l.Attempt, Step: l.Step, Task: task, Kind: domain.StepExit, Code: code})
			g.steps.wg.Done()
		}
		stdout, stderr := out(domain.StepStdout), out(domain.StepStderr)
		p, err := e.startTask(g, l, task, share, env, stdout, stderr)
		if err != nil {
			exit(127, "srun: "+err.Error())
			continue
		}
		g.steps.mu.Lock()
		g.steps.running[l.Step] = append(g.steps.running[l.Step], p)
		ended := g.steps.ended || g.steps.killed[l.Step]
		g.steps.mu.Unlock()
		if ended {
			// The gang or step ended while this task started: ended as the
			// others were, SIGKILL after the grace if SIGTERM is trapped,
			// or endSteps would wait on it for ever.
			e.terminate([]rank{p})
		}
		go func() {
			code := p.finish()
			stdout.flush()
			stderr.flush()
			g.steps.mu.Lock()
			left := slices.DeleteFunc(g.steps.running[l.Step], func(q rank) bool { return q == p })
			if len(left) == 0 {
				delete(g.steps.running, l.Step) // a batch script may run millions of steps
			} else {
				g.steps.running[l.Step] = left
			}
			g.steps.mu.Unlock()
			exit(code, "")
		}()
	}
	e.log.Info("step started", "job", l.JobID, "step", l.Step, "tasks", k, "from", to)
}

// startTask starts one task of a step: in the job's image for a
// container batch job, else as a process, its program looked up on the
// task's PATH (the job's or srun's when they carry one, as its shell
// would).
func (e *executor) startTask(g *localGang, l domain.StepLaunch, task int, share domain.Rank, env rankenv.Env, stdout, stderr io.Writer) (rank, error) {
	if g.img != nil {
		name := "s" + strconv.Itoa(l.Step) + "t" + strconv.Itoa(task)
		return e.startContainer(g, *g.img, ctrTask{name: name, share: share, argv: l.Argv, env: env, stdout: stdout, stderr: stderr})
	}
	taskPath := env.Path
	if p, ok := env.Spec[rankenv.Path]; ok {
		taskPath = p
	}
	path, err := lookPathIn(l.Argv[0], taskPath, g.workdir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, l.Argv[1:]...)
	cmd.Args[0] = l.Argv[0]
	cmd.Dir, cmd.Env = g.workdir, env.List()
	if g.acct.Cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: g.acct.Cred}
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var pin rankPin
	pin.cpus, pin.mems = place.Pin(e.cfg.Node, share, g.as.GPUBind == "closest")
	p, _, err := e.box.start(cmd, pin)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// killStep ends a step's tasks here, on the word of the job's first node.
func (e *executor) killStep(from string, k domain.StepKill) {
	e.mu.Lock()
	g, ok := e.gangs[k.JobID]
	e.mu.Unlock()
	if !ok || g.as.Attempt != k.Attempt || len(g.as.Nodes) == 0 || g.as.Nodes[0] != from {
		return
	}
	g.steps.mu.Lock()
	if k.Signal != "" {
		// Forwarded by srun: the tasks running now get it; none is ended.
		procs := slices.Clone(g.steps.running[k.Step])
		g.steps.mu.Unlock()
		sig := unix.SignalNum(k.Signal)
		for _, p := range procs {
			p.signal(sig)
		}
		return
	}
	if g.steps.killed == nil {
		g.steps.killed = map[int]bool{}
	}
	g.steps.killed[k.Step] = true
	procs := slices.Clone(g.steps.running[k.Step])
	g.steps.mu.Unlock()
	e.terminate(procs)
}

// endSteps ends every step task of the gang here and waits for them: the
// job ended (its script, or the assignment).
func (e *executor) endSteps(g *localGang) {
	g.steps.mu.Lock()
	g.steps.ended = true
	var procs []rank
	for _, ps := range g.steps.running {
		procs = append(procs, ps...)
	}
	g.steps.mu.Unlock()
	e.terminate(procs)
	g.steps.wg.Wait()
}

// terminate sends SIGTERM, then SIGKILL after the stop grace.
func (e *executor) terminate(procs []rank) {
	for _, p := range procs {
		p.signal(syscall.SIGTERM)
	}
	if len(procs) == 0 {
		return
	}
	time.AfterFunc(e.cfg.StopGrace, func() {
		for _, p := range procs {
			if !p.ended() {
				p.kill()
			}
		}
	})
}

// sendOutput publishes to the script's node (core NATS: the launcher
// gives up on a step whose job ends, so a lost message cannot hang it
// longer than the job).
func (e *executor) sendOutput(to string, o domain.StepOutput) {
	if !subjects.Token(to) {
		return
	}
	data, err := json.Marshal(o)
	if err == nil {
		err = e.bus.NC.Publish(subjects.StepTo(subjects.StepOutput, e.cfg.Node.Name, to), data)
	}
	if err != nil {
		e.log.Debug("step output not sent", "job", o.JobID, "step", o.Step, "err", err)
	}
}

// stepLines sends a task's output line by line.
type stepLines struct {
	mu   sync.Mutex
	part []byte
	send func(string)
}

func (s *stepLines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = append(s.part, p...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			if len(s.part) >= maxLine {
				s.send(string(s.part[:maxLine]))
				s.part = s.part[maxLine:]
				continue
			}
			return len(p), nil
		}
		s.send(string(s.part[:i]))
		s.part = s.part[i+1:]
	}
}

func (s *stepLines) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.part) > 0 {
		s.send(string(s.part))
		s.part = nil
	}
}

// lookPathIn finds a task's program as its shell would, on the task's
// PATH (not the agent's); a name with a slash is taken as it is, relative
// to the working directory.
func lookPathIn(name, path, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.Newf("%s: command not found", name)
}
