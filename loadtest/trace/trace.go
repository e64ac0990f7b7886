package trace

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

// Job is one job of a stream.
type Job struct {
	ID string `json:"id"`
	// Submit is the submission time as an offset from the stream's start.
	Submit time.Duration `json:"submit"`
	// Duration is the job's run time on an ideal placement (one leaf).
	Duration    time.Duration `json:"duration"`
	Nodes       int           `json:"nodes"`
	GPUsPerNode int           `json:"gpusPerNode"`
	Queue       string        `json:"queue,omitempty"`
	// MaxSwitches and SwitchWait, when set, ask for at most MaxSwitches
	// leaf switches, waiting up to SwitchWait for them (Slurm's
	// --switches=N@time).
	MaxSwitches int           `json:"maxSwitches,omitempty"`
	SwitchWait  time.Duration `json:"switchWait,omitempty"`
}

// GPUs is the job's GPU count.
func (j Job) GPUs() int { return j.Nodes * j.GPUsPerNode }

// Stats summarises a stream.
type Stats struct {
	Jobs          int           `json:"jobs"`
	Span          time.Duration `json:"span"`
	GPUHours      float64       `json:"gpuHours"`
	MultiNodeJobs int           `json:"multiNodeJobs"`
	MaxGPUs       int           `json:"maxGPUs"`
}

// Summarize computes a stream's statistics.
func Summarize(jobs []Job) Stats {
	s := Stats{Jobs: len(jobs)}
	for _, j := range jobs {
		s.GPUHours += float64(j.GPUs()) * j.Duration.Hours()
		if j.Nodes > 1 {
			s.MultiNodeJobs++
		}
		s.MaxGPUs = max(s.MaxGPUs, j.GPUs())
	}
	if len(jobs) > 0 {
		s.Span = jobs[len(jobs)-1].Submit - jobs[0].Submit
	}
	return s
}

// phillyHeader is the first line of the Philly trace file.
var phillyHeader = []string{"job_id", "submit_s", "duration_s", "gpus", "nodes", "gpus_per_node", "status", "queue"}

// ReadPhilly reads a (decompressed) trace in the format of
// ../shared/traces/philly2017_microsoft.csv.gz. Rows with a zero duration
// or no GPUs are skipped; the result is sorted by submission (stable, so
// file order breaks ties).
func ReadPhilly(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = len(phillyHeader)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, errors.Wrap(err, "reading trace header")
	}
	for i, want := range phillyHeader {
		if strings.TrimSpace(header[i]) != want {
			return nil, errors.Newf("trace header is %q, want %q", strings.Join(header, ","), strings.Join(phillyHeader, ","))
		}
	}
	var jobs []Job
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errors.Wrap(err, "reading trace")
		}
		line, _ := cr.FieldPos(0)
		var v [5]int64
		for i := range v {
			if v[i], err = strconv.ParseInt(strings.TrimSpace(rec[i+1]), 10, 64); err != nil {
				return nil, errors.Newf("trace line %d: %s %q is not an integer", line, phillyHeader[i+1], rec[i+1])
			}
		}
		submit, dur, gpus, nodes, perNode := v[0], v[1], v[2], v[3], v[4]
		if dur <= 0 || gpus <= 0 {
			continue
		}
		if nodes <= 0 || perNode <= 0 {
			return nil, errors.Newf("trace line %d: nodes %d × gpus_per_node %d", line, nodes, perNode)
		}
		jobs = append(jobs, Job{
			ID: rec[0], Submit: time.Duration(submit) * time.Second, Duration: time.Duration(dur) * time.Second,
			Nodes: int(nodes), GPUsPerNode: int(perNode), Queue: strings.TrimSpace(rec[7]),
		})
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Submit < jobs[b].Submit })
	return jobs, nil
}

// Load reads a Philly-format trace file, gzip-compressed when its name
// ends in .gz.
func Load(path string) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "open trace")
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, errors.Wrapf(err, "trace %s", path)
		}
		defer gz.Close()
		r = gz
	}
	jobs, err := ReadPhilly(r)
	return jobs, errors.Wrapf(err, "trace %s", path)
}

// Head keeps the first n jobs (all when n <= 0).
func Head(jobs []Job, n int) []Job {
	if n > 0 && n < len(jobs) {
		return jobs[:n]
	}
	return jobs
}

// Rebase shifts submissions so the first job is submitted at 0.
func Rebase(jobs []Job) []Job {
	if len(jobs) == 0 || jobs[0].Submit == 0 {
		return jobs
	}
	base := jobs[0].Submit
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		j.Submit -= base
		out[i] = j
	}
	return out
}

// DefaultPhilly is the Philly trace's path, looked up relative to the
// module root (../shared/traces/ beside the repository), or "" when it is
// not there.
func DefaultPhilly() string { return sharedFile("philly2017_microsoft.csv.gz") }

// DefaultLingjun is the Lingjun topology's path, like DefaultPhilly.
func DefaultLingjun() string { return sharedFile("alibaba_lingjun2023_topo.csv.gz") }

func sharedFile(name string) string {
	root := ModuleRoot()
	if root == "" {
		return ""
	}
	p := filepath.Join(root, "..", "shared", "traces", name)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// ModuleRoot walks up from the working directory to the directory holding
// Lockstep's go.mod, or returns "".
func ModuleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(b), "module github.com/lockstep-dev/lockstep\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
